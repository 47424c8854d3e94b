// Command prior writes N programs sampled from the untrained built-in recipe
// policy (recipe.NewPolicy, scratch prompts, the policy's own temperature and
// prior) for one task, so their failure rate can be measured with
// `mlerl exec` (bench/run-prior.sh). It runs nothing itself.
//
//	go run ./bench/prior --task bench/unseen/hotel-rates --n 30 --seed 1 --out DIR
//
// DIR/NNN.py is program NNN; DIR/profile.json is what the policy read of the
// task (recipe.NewProfile: column kinds, classes); DIR/plans.tsv lists "NNN<TAB>plan key" (the key is also the program's first line).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/suite"
	"github.com/mlerl/mlerl/task"
)

func main() {
	taskArg := flag.String("task", "", "suite name or task folder")
	n := flag.Int("n", 30, "programs to sample")
	seed := flag.Uint64("seed", 1, "policy seed (net initialisation and sampling)")
	out := flag.String("out", "", "folder to write the programs into")
	def := flag.Bool("default", false, "write only the policy's prior plan (recipe.Default, what the hints point at) as 000.py")
	flag.Parse()
	if *taskArg == "" || *out == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: prior --task T --out DIR [--n 30] [--seed 1]")
		os.Exit(2)
	}
	if err := run(*taskArg, *n, *seed, *out, *def); err != nil {
		fmt.Fprintln(os.Stderr, "prior:", err)
		os.Exit(1)
	}
}

func run(taskArg string, n int, seed uint64, out string, def bool) error {
	dir, err := suite.Resolve(taskArg)
	if err != nil {
		return err
	}
	t, err := task.Load(dir)
	if err != nil {
		return err
	}
	pol, err := recipe.NewPolicy([]*task.Task{t}, seed)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	prof, err := recipe.NewProfile(t)
	if err != nil {
		return err
	}
	pj, err := json.MarshalIndent(prof, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "profile.json"), append(pj, '\n'), 0o644); err != nil {
		return err
	}
	if def {
		code, err := recipe.Render(prof, recipe.Default(prof))
		if err != nil {
			return err
		}
		key, _, _ := strings.Cut(strings.TrimPrefix(code, "# plan: "), "\n")
		if err := os.WriteFile(filepath.Join(out, "000.py"), []byte(code), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, "plans.tsv"), []byte("000\t"+key+"\n"), 0o644)
	}
	prompts := make([]rl.Prompt, n)
	for i := range prompts {
		prompts[i] = rl.Prompt{Kind: episode.Scratch, Task: t}
	}
	acts, err := pol.Sample(context.Background(), prompts)
	if err != nil {
		return err
	}
	var plans strings.Builder
	for i, a := range acts {
		name := fmt.Sprintf("%03d", i)
		if err := os.WriteFile(filepath.Join(out, name+".py"), []byte(a.Code), 0o644); err != nil {
			return err
		}
		key, _, _ := strings.Cut(strings.TrimPrefix(a.Code, "# plan: "), "\n")
		fmt.Fprintf(&plans, "%s\t%s\n", name, key)
	}
	return os.WriteFile(filepath.Join(out, "plans.tsv"), []byte(plans.String()), 0o644)
}
