package llm

import (
	"time"

	"github.com/mlerl/mlerl/task"
)

// This file is what serve (the environment for external trainers) needs of
// the policy's prompts and reply parsing, so that a trainer outside this
// process sees the same prompts and gets its replies run the same way.

// ProgramOf is the program a model's whole reply is run as, exactly as the
// policy runs it: the first Python code block, or, when the reply holds
// none, a program that fails at once with the reason (problem says it), so
// the episode earns the failure reward rather than an error.
func ProgramOf(reply string) (code, plan, problem string) {
	r := parseReply(reply)
	if r.Code == "" {
		return failingProgram(r.Problem), r.Plan, r.Problem
	}
	return r.Code, r.Plan, ""
}

// PromptInfo is the task's prompt material as the policy builds it (default
// limits and packages), telling the model the program time limit.
func PromptInfo(t *task.Task, timeLimit time.Duration) (*TaskInfo, error) {
	info, err := NewTaskInfo(t, DefaultLimits(), DefaultPackages())
	if err != nil {
		return nil, err
	}
	info.TimeLimit = durationWords(timeLimit)
	return info, nil
}
