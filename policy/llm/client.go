package llm

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mlerl/mlerl/chat"
)

// Message is one chat message, as sent and as recorded in rollouts.jsonl.
type Message = chat.Message

// completion is one sampled reply with its per-token behaviour log-probabilities.
type completion = chat.Choice

// errNRefused: the server refused n>1; the samples are asked for one each.
var errNRefused = chat.ErrNRefused

// client is the policy's chat client plus what the policy learns about the
// server while sampling.
type client struct {
	*chat.Client
	cfg Config
	// noN is set once the server has refused or ignored n>1 (llama.cpp);
	// from then on every sample is its own request.
	noN atomic.Bool
}

func newClient(cfg Config) *client {
	return &client{
		Client: chat.New(chat.Config{
			URL: cfg.URL, Model: cfg.Model, APIKey: cfg.APIKey, Timeout: cfg.Timeout,
			Retries: cfg.Retries, Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff, Concurrency: cfg.Concurrency,
		}),
		cfg: cfg,
	}
}

// complete asks for n samples of one conversation. It may return fewer than n
// completions when the server ignored n; the caller asks for the rest.
func (c *client) complete(ctx context.Context, msgs []Message, n int) ([]completion, error) {
	return c.Complete(ctx, chat.Request{
		Messages: msgs, Temperature: c.cfg.Temperature, TopP: 1, MaxTokens: c.cfg.MaxTokens, N: n, Logprobs: true,
	})
}

// tokenIDs returns the token ids when the server sent tokens as "token_id:N"
// (vLLM with return_tokens_as_token_ids), else nil: a trainer then
// re-tokenises the response, which with the same tokenizer gives the same ids.
func tokenIDs(tokens []string) []int {
	if len(tokens) == 0 {
		return nil
	}
	ids := make([]int, len(tokens))
	for i, t := range tokens {
		s, ok := strings.CutPrefix(t, "token_id:")
		if !ok {
			return nil
		}
		id, err := strconv.Atoi(s)
		if err != nil {
			return nil
		}
		ids[i] = id
	}
	return ids
}
