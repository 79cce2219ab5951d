package lda

import "slices"

// docTopics lists the distinct topics of the short document being sampled,
// in the order they first occur, for the kernels that sum a document part
// over them (exactDoc, collapsedToken) instead of over its tokens, which
// share topics more and more as the chain forms them. A topic may stay
// listed after its count falls to 0; its weight is then 0, and it is never
// drawn.
type docTopics struct {
	topics []uint16
	listed []uint8  // listed[t]: 1 when t is in topics, else 0
	sums   []uint64 // scratch: a running sum per listed topic
}

// count adds the topics of zd to the counts cnt and lists the distinct
// ones, with room for a running sum each. clear must follow before the
// next document. Every token's topic is written at the end of the list,
// which grows only when the topic was not listed: whether a topic is new is
// random, and a branch on it would be mispredicted.
func (dt *docTopics) count(zd []uint16, cnt []int32) {
	topics := slices.Grow(dt.topics[:0], len(zd))[:len(zd)]
	listed := dt.listed
	n := 0
	for _, t := range zd {
		topics[n] = t
		n += int(1 - listed[t])
		listed[t] = 1
		cnt[t]++
	}
	dt.topics = topics[:n]
	dt.sums = slices.Grow(dt.sums[:0], n)[:n]
}

// clear unlists the listed topics and sets their counts in cnt to 0, which
// zeroes every count the document added.
func (dt *docTopics) clear(cnt []int32) {
	for _, t := range dt.topics {
		dt.listed[t] = 0
		cnt[t] = 0
	}
	dt.topics = dt.topics[:0]
}
