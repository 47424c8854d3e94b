package ui

import (
	"fmt"
	"net"
)

// DefaultAddr is loopback: a run's programs and scores are not for the network
// unless asked (--listen 0.0.0.0:PORT).
const DefaultAddr = "127.0.0.1:8080"

func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ui: listen: %w", err)
	}
	return ln, nil
}
