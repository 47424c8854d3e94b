//go:build race

package sandbox

// raceEnabled: the race detector's shadow memory keeps freed heap resident.
const raceEnabled = true
