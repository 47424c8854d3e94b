// Package llm is the language-model policy: plan + code sampled from any
// OpenAI-compatible chat-completions server (vLLM, SGLang, llama.cpp server,
// Ollama) with per-token log-probabilities, prompted as in the paper's
// appendix C (prompts/*.tmpl).
//
// Gradient steps on a language model need GPUs this program does not drive.
// So Update does what can honestly be done here: it hands the batch to an
// external trainer by appending one line per sample to rollouts.jsonl (the
// messages sent, the response, the behaviour log-probabilities, the reward,
// the duration-weighted advantage, the weight and the execution time), and
// bumps Version, which counts batches handed over — not weights the server
// has loaded. A trainer that updates the served model closes the loop; until
// then every sample comes from the same weights and PPO's ratio is 1.
//
// With NoLearn the policy is the prompting baseline the paper compares
// against (AIDE-like with the learner's buffer of one: draft, improve the
// best, keep the best): the same loop, prompts and rewards, Version stays 0.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// Config configures the policy. Zero fields take the defaults in brackets.
type Config struct {
	URL         string  // base URL ("http://host:8000", ".../v1") or the full .../chat/completions URL
	Model       string  // model name sent in each request
	APIKey      string  // sent as "Authorization: Bearer KEY" when not empty
	Temperature float64 // sampling temperature [0.7, the paper's]
	MaxTokens   int     // response limit [1024, the paper's]
	// Concurrency is the most requests on the wire at once [4].
	Concurrency int
	// Timeout is per attempt [10m: a slow server writing 1024 tokens].
	Timeout time.Duration
	// Retries are extra attempts after a network error, timeout, 429, 5xx or
	// malformed reply [5]; negative means none.
	Retries    int
	Backoff    time.Duration // first wait between attempts, doubling [1s]
	MaxBackoff time.Duration // longest wait, Retry-After included [60s]
	// Rollouts is the path of rollouts.jsonl; empty writes none.
	Rollouts string
	// NoLearn makes the prompting baseline: Update records but never bumps Version.
	NoLearn  bool
	Limits   Limits   // [DefaultLimits()]
	Packages []string // installed packages the prompt lists [DefaultPackages()]
	// TimeLimit is the sandbox's limit per program, told to the model; 0 says nothing.
	TimeLimit time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if c.URL == "" || c.Model == "" {
		return c, errors.New("llm policy: a server URL and a model name are required")
	}
	if c.Temperature == 0 {
		c.Temperature = 0.7
	}
	if c.Temperature < 0 {
		return c, fmt.Errorf("llm policy: temperature %v must not be negative", c.Temperature)
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = 1024
	}
	if c.MaxTokens < 0 {
		return c, fmt.Errorf("llm policy: max tokens %d must be positive", c.MaxTokens)
	}
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	if c.Concurrency < 0 {
		return c, fmt.Errorf("llm policy: concurrency %d must be positive", c.Concurrency)
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.Retries == 0 {
		c.Retries = 5
	}
	c.Retries = max(c.Retries, 0)
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = time.Minute
	}
	if c.Limits == (Limits{}) {
		c.Limits = DefaultLimits()
	}
	if c.Packages == nil {
		c.Packages = DefaultPackages()
	}
	return c, nil
}

// Policy is the language-model policy; it satisfies rl.Policy.
type Policy struct {
	cfg   Config
	c     *client
	infos map[string]*TaskInfo

	mu      sync.Mutex
	version int
	updates int
}

var _ rl.Policy = (*Policy)(nil)

// New reads every task's prompt material up front (an unreadable task is an
// error now, not mid-run). It sends nothing to the server.
func New(cfg Config, tasks []*task.Task) (*Policy, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Policy{cfg: cfg, c: newClient(cfg), infos: map[string]*TaskInfo{}}
	for _, t := range tasks {
		info, err := NewTaskInfo(t, cfg.Limits, cfg.Packages)
		if err != nil {
			return nil, fmt.Errorf("llm policy: %w", err)
		}
		info.TimeLimit = durationWords(cfg.TimeLimit)
		p.infos[t.Name] = info
	}
	return p, nil
}

// meta is the policy's record of an action: exactly what was sent and what
// came back, so rollouts.jsonl can be written from it (after a resume too).
type meta struct {
	Messages     []Message `json:"messages"`
	Response     string    `json:"response"`
	Tokens       []string  `json:"tokens,omitempty"`
	Logprobs     bool      `json:"logprobs"` // the server sent per-token log-probabilities
	FinishReason string    `json:"finish_reason,omitempty"`
	Model        string    `json:"model,omitempty"`
	// Problem says why the reply held no program (then Code fails at once).
	Problem string `json:"problem,omitempty"`
}

// Version counts updates handed to the external trainer (0 with NoLearn).
func (p *Policy) Version() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}

// Sample writes one action per prompt. Identical prompts (scratch prompts of
// one task) go out as one request with n>1 while the server accepts that;
// otherwise every sample is its own request, all in parallel up to the
// concurrency limit. A request that still fails after its retries fails the
// call: the run stops and can be resumed, rather than training on replies
// that never came. A reply without a program is not an error: its action runs
// a program that fails at once and earns the failure reward.
func (p *Policy) Sample(ctx context.Context, prompts []rl.Prompt) ([]rl.Action, error) {
	version := p.Version()
	msgs := make([][]Message, len(prompts))
	var order []string
	groups := map[string][]int{}
	for i, pr := range prompts {
		if pr.Task == nil {
			return nil, errors.New("llm policy: prompt without a task")
		}
		info, ok := p.infos[pr.Task.Name]
		if !ok {
			return nil, fmt.Errorf("llm policy: task %s was not given to New", pr.Task.Name)
		}
		m, err := Messages(info, pr, p.cfg.Limits)
		if err != nil {
			return nil, fmt.Errorf("llm policy: task %s: %w", pr.Task.Name, err)
		}
		msgs[i] = m
		key, _ := json.Marshal(m)
		if _, ok := groups[string(key)]; !ok {
			order = append(order, string(key))
		}
		groups[string(key)] = append(groups[string(key)], i)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	comps := make([]completion, len(prompts))
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	for _, key := range order {
		idx := groups[key]
		wg.Go(func() {
			got, err := p.sampleN(ctx, msgs[idx[0]], len(idx))
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				errMu.Unlock()
				return
			}
			for j, i := range idx {
				comps[i] = got[j]
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("llm policy: sampling from %s: %w", p.c.Endpoint(), firstErr)
	}

	actions := make([]rl.Action, len(prompts))
	for i, pr := range prompts {
		a, err := p.action(pr, msgs[i], comps[i], version)
		if err != nil {
			return nil, err
		}
		actions[i] = a
	}
	return actions, nil
}

// sampleN gets n completions of one conversation: one request with n while
// the server honours it, then one request per missing sample.
func (p *Policy) sampleN(ctx context.Context, msgs []Message, n int) ([]completion, error) {
	var out []completion
	if n > 1 && !p.c.noN.Load() {
		got, err := p.c.complete(ctx, msgs, n)
		switch {
		case errors.Is(err, errNRefused):
			p.c.noN.Store(true)
		case err != nil:
			return nil, err
		default:
			out = got
			if len(got) < n {
				p.c.noN.Store(true) // it ignored n (some servers return one choice)
			}
		}
	}
	rest := make([]completion, n-len(out))
	errs := make([]error, len(rest))
	var wg sync.WaitGroup
	for i := range rest {
		wg.Go(func() {
			got, err := p.c.complete(ctx, msgs, 1)
			if err == nil && len(got) == 0 {
				err = errors.New("reply has no choices")
			}
			if err != nil {
				errs[i] = err
				return
			}
			rest[i] = got[0]
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return append(out, rest...), nil
}

// maxPlan bounds the plan kept on an action (episodes.jsonl shows it); the
// whole reply is in the action's meta.
const maxPlan = 4000

func (p *Policy) action(pr rl.Prompt, msgs []Message, c completion, version int) (rl.Action, error) {
	r := parseReply(c.Content)
	code := r.Code
	if code == "" {
		code = failingProgram(r.Problem)
	}
	raw, err := json.Marshal(meta{
		Messages: msgs, Response: c.Content, Tokens: c.Tokens, Logprobs: c.HasLogprobs,
		FinishReason: c.FinishReason, Model: c.Model, Problem: r.Problem,
	})
	if err != nil {
		return rl.Action{}, fmt.Errorf("llm policy: recording an action: %w", err)
	}
	kind := pr.Kind
	if pr.Parent == nil {
		kind = episode.Scratch
	}
	return rl.Action{
		Kind: kind, Plan: clip(r.Plan, maxPlan), Code: code, PolicyVersion: version,
		Tokens: tokenIDs(c.Tokens), TokenLogProbs: c.Logprobs, Meta: raw,
	}, nil
}

// Update hands the batch to the external trainer: one line per sample is
// appended to rollouts.jsonl, with the episode's execution time from the
// sample's result. Version goes up by one unless NoLearn. The entropy
// reported is the Monte Carlo estimate −mean(log p) over the batch's sampled
// tokens; loss, KL and clip fraction are the trainer's to report.
func (p *Policy) Update(ctx context.Context, samples []rl.Sample) (rl.UpdateStats, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var st rl.UpdateStats
	var sum float64
	var n int
	for _, s := range samples {
		for _, lp := range s.Action.TokenLogProbs {
			sum -= lp
			n++
		}
		st.MaxStale = max(st.MaxStale, p.version-s.Action.PolicyVersion)
	}
	p.updates++
	if err := p.writeRollouts(samples); err != nil {
		return rl.UpdateStats{}, err
	}
	if !p.cfg.NoLearn {
		p.version++
	}
	if n > 0 {
		st.Entropy = sum / float64(n)
	}
	st.NewVersion = p.version
	return st, nil
}

// Rollout is one line of rollouts.jsonl (CONTRACT.md §3): what an external
// trainer needs for one sample. Advantage already carries the duration
// weight (advantage = (reward − baseline) × weight, weight = Δt / mean Δt of
// the batch), so a PPO trainer uses it as is; token_logprobs are the
// behaviour policy's, for the ratio.
type Rollout struct {
	Messages      []Message `json:"messages"`
	Response      string    `json:"response"`
	TokenLogprobs []float64 `json:"token_logprobs"`
	Reward        float64   `json:"reward"`
	Advantage     float64   `json:"advantage"`
	Weight        float64   `json:"weight"`
	DurationS     *float64  `json:"duration_s"`
	PolicyVersion int       `json:"policy_version"`

	// Beyond the contract: what a trainer may want to align or filter on.
	Tokens       []string `json:"tokens,omitempty"`    // the server's token strings, one per log-probability
	TokenIDs     []int    `json:"token_ids,omitempty"` // when the server sent "token_id:N" tokens
	Episode      string   `json:"episode,omitempty"`
	Task         string   `json:"task"`
	Kind         string   `json:"kind"`
	Update       int      `json:"update"`
	FinishReason string   `json:"finish_reason,omitempty"`
	Model        string   `json:"model,omitempty"`
	Problem      string   `json:"problem,omitempty"`
}

// writeRollouts appends samples to rollouts.jsonl; p.mu is held.
func (p *Policy) writeRollouts(samples []rl.Sample) error {
	lines := make([]Rollout, len(samples))
	for i, s := range samples {
		var m meta
		if err := json.Unmarshal(s.Action.Meta, &m); err != nil {
			return fmt.Errorf("llm policy: sample without an llm record: %w", err)
		}
		d := s.Result.DurationS
		ro := Rollout{
			Messages: m.Messages, Response: m.Response, TokenLogprobs: s.Action.TokenLogProbs,
			Reward: s.Reward, Advantage: s.Advantage, Weight: s.Weight, PolicyVersion: s.Action.PolicyVersion,
			DurationS: &d, Episode: s.Result.Episode,
			Tokens: m.Tokens, TokenIDs: s.Action.Tokens, Kind: string(s.Action.Kind), Update: p.updates,
			FinishReason: m.FinishReason, Model: m.Model, Problem: m.Problem,
		}
		if ro.TokenLogprobs == nil {
			ro.TokenLogprobs = []float64{}
		}
		if s.Prompt.Task != nil {
			ro.Task = s.Prompt.Task.Name
		}
		lines[i] = ro
	}
	if p.cfg.Rollouts == "" {
		return nil
	}
	return appendLines(p.cfg.Rollouts, lines)
}

func appendLines(path string, lines []Rollout) error {
	var buf []byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("llm policy: encoding a rollout: %w", err)
		}
		buf = append(append(buf, b...), '\n')
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("llm policy: rollouts: %w", err)
	}
	_, err = f.Write(buf)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("llm policy: writing %s: %w", path, err)
	}
	return nil
}

const stateFile = "llm-policy.json"

// state is what a checkpoint keeps: the counters, what was learnt about the
// server, and how long rollouts.jsonl was, so a resume cuts back lines
// written after the checkpoint (the resumed run writes them again).
type state struct {
	Version       int    `json:"version"`
	Updates       int    `json:"updates"`
	RolloutsBytes int64  `json:"rollouts_bytes"`
	NRefused      bool   `json:"n_refused"`
	Model         string `json:"model"`
	URL           string `json:"url"`
}

// Save writes the policy's state into dir.
func (p *Policy) Save(dir string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := state{Version: p.version, Updates: p.updates, NRefused: p.c.noN.Load(), Model: p.cfg.Model, URL: p.cfg.URL}
	if p.cfg.Rollouts != "" {
		if fi, err := os.Stat(p.cfg.Rollouts); err == nil {
			st.RolloutsBytes = fi.Size()
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("llm policy: save: %w", err)
		}
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("llm policy: save: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("llm policy: save: %w", err)
	}
	tmp := filepath.Join(dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("llm policy: save: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, stateFile)); err != nil {
		return fmt.Errorf("llm policy: save: %w", err)
	}
	return nil
}

// Load restores what Save wrote and cuts rollouts.jsonl back to its length then.
func (p *Policy) Load(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return fmt.Errorf("llm policy: load: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("llm policy: load %s: %w", filepath.Join(dir, stateFile), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.version, p.updates = st.Version, st.Updates
	p.c.noN.Store(st.NRefused)
	if p.cfg.Rollouts == "" {
		return nil
	}
	fi, err := os.Stat(p.cfg.Rollouts)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("llm policy: load: %w", err)
	}
	if fi.Size() > st.RolloutsBytes {
		if err := os.Truncate(p.cfg.Rollouts, st.RolloutsBytes); err != nil {
			return fmt.Errorf("llm policy: load: cutting back %s: %w", p.cfg.Rollouts, err)
		}
	}
	return nil
}

// Attempts is the number of HTTP requests sent so far (retries included).
func (p *Policy) Attempts() int64 { return p.c.Attempts() }
