package grade

import (
	"fmt"
	"hash/maphash"
	"math/bits"
)

// idIndex maps ids to answer rows. It is an open-addressing table whose slots
// hold a hash tag and the id's place in one shared string, so a lookup costs
// one cache miss for the slot and one for the id bytes (a Go map of strings
// costs three). Lookups are also done in batches (probe), so the misses of
// many ids overlap: on a million shuffled ids this is most of grading time.
type idIndex struct {
	seed  maphash.Seed
	mask  uint64
	slots []idSlot
	all   string // every id, concatenated
}

type idSlot struct {
	tag      uint32 // high bits of the hash
	row      uint32 // answer row + 1; 0 marks an empty slot
	off, end uint32 // the id is all[off:end]
}

// newIDIndex indexes ids, which are substrings of all at the given offsets
// (ends[i] is the end of ids[i], which starts where ids[i-1] ends). An id
// that appears twice is an error naming both rows (counted from 1).
func newIDIndex(all string, ends []int) (*idIndex, error) {
	size := uint64(1) << bits.Len64(uint64(len(ends))*2) // load factor <= 1/2
	x := &idIndex{seed: maphash.MakeSeed(), mask: size - 1, slots: make([]idSlot, size), all: all}
	start := 0
	for i, end := range ends {
		h := maphash.String(x.seed, all[start:end])
		s := h & x.mask
		for ; x.slots[s].row != 0; s = (s + 1) & x.mask {
			if e := x.slots[s]; e.tag == uint32(h>>32) && all[e.off:e.end] == all[start:end] {
				return nil, fmt.Errorf("row %d: id %q appears twice (also row %d)", i+1, clip(all[start:end]), e.row)
			}
		}
		x.slots[s] = idSlot{tag: uint32(h >> 32), row: uint32(i + 1), off: uint32(start), end: uint32(end)}
		start = end
	}
	return x, nil
}

func (x *idIndex) hash(id []byte) uint64 { return maphash.Bytes(x.seed, id) }

// find returns the answer row of id, whose hash is h, or -1.
func (x *idIndex) find(id []byte, h uint64) int32 {
	tag := uint32(h >> 32)
	for s := h & x.mask; ; s = (s + 1) & x.mask {
		e := &x.slots[s]
		if e.row == 0 {
			return -1
		}
		if e.tag == tag && x.all[e.off:e.end] == string(id) {
			return int32(e.row - 1)
		}
	}
}

// touch loads the first slot of hash h and the bytes of the id stored there,
// and returns a value that depends on both so the loads are not dropped.
// Called for a batch of ids before find, it lets their cache misses overlap.
func (x *idIndex) touch(h uint64) byte {
	e := &x.slots[h&x.mask]
	if e.row == 0 || e.off == e.end {
		return byte(e.row)
	}
	return x.all[e.off]
}
