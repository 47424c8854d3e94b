package queue

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/mlerl/mlerl/episode"
)

// jobMsg is one message of the job stream.
type jobMsg struct {
	Job    episode.Job `json:"job"`
	Digest string      `json:"digest"`
	// Data is the SHA-256 of the task's public files in the task store (the
	// job's Data; kept for workers of the previous message format).
	Data string `json:"data"`
}

// resultMsg is one message of the result stream: the raw run of a job.
type resultMsg struct {
	Exec   episode.Execution `json:"exec"`
	Digest string            `json:"digest"` // echoed from the job
	Worker string            `json:"worker"`
	// Attempt is JetStream's delivery count of the job message: above 1, the
	// job was redelivered (its first worker died or lost its connection).
	Attempt uint64 `json:"attempt"`
	// The submission travels inline when the whole message fits the server's
	// max_payload, which it does for nearly every task (a few KB to a few
	// hundred KB of CSV); otherwise it is put in the submission store, named
	// here, and verified by SubmissionSHA on the way out.
	Submission       []byte `json:"submission,omitempty"`
	SubmissionObject string `json:"submission_object,omitempty"`
	SubmissionSHA    string `json:"submission_sha,omitempty"`
}

// digest identifies a job's content. A result is accepted only for the job
// with the same id and digest: after a crash and resume the learner reuses
// the ids it had handed out after its last checkpoint, and a late result of
// the old job must not be mistaken for the new one — unless the content is
// the same, in which case the result is exactly as good.
func digest(j episode.Job) string {
	h := sha256.New()
	for _, s := range []string{j.ID, string(j.Kind), strconv.Itoa(j.PolicyVersion), j.Plan, j.Key()} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
