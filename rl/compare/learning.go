package compare

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/mlerl/mlerl/policy/recipe"
	"github.com/mlerl/mlerl/rl"
)

// Learning is how the RL arms learn: the settings a comparison gives its RL
// arms and none of the others (the prompting baseline and random search
// do not learn, so these never shaped their runs). One struct in Config and,
// resolved, in Result, so that a new setting is recorded, merged and
// compared between parts by adding a field here: Merge's check of parts
// reads the fields by reflection, each named by its `what` tag.
//
// The JSON names are the results files' (rl_...); a field that is absent in
// a file written before it existed reads as its zero, which is off.
type Learning struct {
	// Utility is rl.Config.Utility (empty: the learner's default).
	Utility string `json:"rl_utility" what:"utility"`
	// ImproveCredit is rl.Config.ImproveCredit (empty: the default).
	ImproveCredit string `json:"rl_improve_credit" what:"improve credit"`
	// TimeCharge is rl.Config.TimeCharge, as given (0: none).
	TimeCharge float64 `json:"rl_time_charge" what:"time charge"`
	// ChargeSlowerOnly is rl.Config.ChargeSlowerOnly.
	ChargeSlowerOnly bool `json:"rl_time_charge_slower_only,omitempty" what:"time charge on slower programs only"`
	// Elite is rl.Config.Elite, as given (0: plain ranks).
	Elite float64 `json:"rl_elite" what:"elite"`
	// DecisionCredit is rl.Config.DecisionCredit.
	DecisionCredit bool `json:"rl_decision_credit,omitempty" what:"decision credit"`
	// EditFloor is recipe.Policy.SetEditFloor's share (0: off).
	EditFloor float64 `json:"rl_edit_floor,omitempty" what:"edit floor"`
	// ScratchPrior is recipe.Policy.SetScratchPrior's share (0: off).
	ScratchPrior float64 `json:"rl_scratch_prior,omitempty" what:"scratch prior"`
	// WidenAfter is rl.Config.WidenAfter (0: off): the prompting
	// baseline's walks are the prior's already.
	WidenAfter int `json:"rl_widen_after,omitempty" what:"widen after"`
	// FlatFamilyAfter is rl.Config.FlatFamilyAfter, with
	// recipe.Policy.SetFlatFamily on when it is above 0 (0: off). It
	// changes the scratch prior's walks only: the prompting baseline has
	// none (its every walk is the prior's, with its preference).
	FlatFamilyAfter time.Duration `json:"rl_flat_family_after_ns,omitempty" what:"flat family after"`
	// PriorOnRepeat is recipe.Policy.SetPriorOnRepeat.
	PriorOnRepeat bool `json:"rl_prior_on_repeat,omitempty" what:"prior on repeat"`
	// Screen is recipe.Policy.SetScreen's K (0: off): the model it picks
	// with is fitted on the run's results, which the prompting baseline
	// does not learn from.
	Screen int `json:"rl_screen,omitempty" what:"screen"`
	// ScreenPerSecond is recipe.Policy.SetScreenPerSecond (needs Screen).
	ScreenPerSecond bool `json:"rl_screen_per_second,omitempty" what:"screen per second"`
	// ScreenAfter is recipe.Policy.SetScreenAfter (needs Screen; 0: the
	// screen from the start).
	ScreenAfter int `json:"rl_screen_after,omitempty" what:"screen after"`
	// InitPolicy, when set, is a run folder whose learnt policy the RL arms
	// start from (train --init-policy): RL trained elsewhere, e.g. on the
	// suite, against prompting the untrained prior on these tasks.
	InitPolicy string `json:"rl_init_policy,omitempty" what:"initial policy"`
	// Buffer is rl.Config.BufferSize (0: the default); the prompting
	// baseline's is 1, the best so far, as train --no-learn's.
	Buffer int `json:"rl_buffer" what:"buffer"`
}

// resolved is l with the learner's defaults in place of empty settings, as
// a result records them.
func (l Learning) resolved() Learning {
	rc := l.config()
	l.Utility, l.ImproveCredit, l.Buffer = rc.Utility, rc.ImproveCredit, rc.BufferSize
	return l
}

// config is the learner's default configuration with l's part set in it.
func (l Learning) config() rl.Config {
	rc := rl.DefaultConfig()
	l.learner(&rc)
	return rc
}

// check refuses settings no RL arm could run with, before any run starts.
func (l Learning) check() error {
	return errors.Join(l.config().CheckShaping(), recipe.CheckScreenPerSecond(l.Screen, l.ScreenPerSecond),
		recipe.CheckScreenAfter(l.Screen, l.ScreenAfter),
		recipe.CheckEditFloor(l.EditFloor), recipe.CheckScratchPrior(l.ScratchPrior), rl.CheckWidenAfter(l.WidenAfter), recipe.CheckScreen(l.Screen),
		rl.CheckFlatFamilyAfter(l.FlatFamilyAfter), flatNeedsScratchPrior(l.FlatFamilyAfter, l.ScratchPrior))
}

// flatNeedsScratchPrior refuses flat-family walks without the scratch prior
// walks they change (nil when both or neither are set).
func flatNeedsScratchPrior(after time.Duration, scratchPrior float64) error {
	if after > 0 && scratchPrior == 0 {
		return fmt.Errorf("flat family after %v changes the scratch prior's walks: it needs a scratch prior above 0", after)
	}
	return nil
}

// learner sets the learner's part of l in rc; empty settings leave rc's.
func (l Learning) learner(rc *rl.Config) {
	rc.Utility, rc.BufferSize = cmp.Or(l.Utility, rc.Utility), cmp.Or(l.Buffer, rc.BufferSize)
	rc.ImproveCredit, rc.TimeCharge, rc.Elite = cmp.Or(l.ImproveCredit, rc.ImproveCredit), l.TimeCharge, l.Elite
	rc.ChargeSlowerOnly, rc.DecisionCredit, rc.WidenAfter = l.ChargeSlowerOnly, l.DecisionCredit, l.WidenAfter
	rc.FlatFamilyAfter = l.FlatFamilyAfter
}

// policy sets the policy's part of l in rp (the initial policy is loaded
// by the caller, which has the run folder code).
func (l Learning) policy(rp *recipe.Policy) error {
	err := errors.Join(rp.SetEditFloor(l.EditFloor), rp.SetScratchPrior(l.ScratchPrior))
	rp.SetPriorOnRepeat(l.PriorOnRepeat)
	rp.SetFlatFamily(l.FlatFamilyAfter > 0)
	rp.SetScreenPerSecond(l.ScreenPerSecond)
	err = errors.Join(err, rp.SetScreen(l.Screen))
	return errors.Join(err, rp.SetScreenAfter(l.ScreenAfter))
}

// diff names the settings in which l and o differ, each with both values
// ("" when none).
func (l Learning) diff(o Learning) string {
	a, b := reflect.ValueOf(l), reflect.ValueOf(o)
	var d []string
	for i := range a.NumField() {
		if x, y := a.Field(i).Interface(), b.Field(i).Interface(); x != y {
			d = append(d, fmt.Sprintf("%s (%v, %v)", a.Type().Field(i).Tag.Get("what"), x, y))
		}
	}
	return strings.Join(d, ", ")
}
