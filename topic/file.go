package topic

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
)

// The model file is one self-describing binary file (all integers and
// floats little-endian):
//
//	magic       8 bytes   "FEDTOPIC"
//	version     uint32    FormatVersion
//	headerLen   uint32    length of the JSON header, at most maxHeaderLen
//	header      JSON      {"k", "v", "alpha", "beta", "phi": "float64le", "provenance"}
//	vocabLen    uint64    length of the vocabulary section in bytes
//	vocabulary  V words, each a uvarint byte length and the word's bytes
//	phi         K×V float64, row-major (topic k, word w at k·V+w)
//	checksum    uint32    CRC-32C (Castagnoli) of every byte before it
//
// Φ is stored as float64 so that a saved model loads bit for bit. Readers of
// a later fedtopic keep reading every earlier version; a reader meeting a
// newer version than it knows refuses it with a message naming both.

// FormatVersion is the model file format version this package writes.
const FormatVersion = 1

const (
	magic        = "FEDTOPIC"
	phiEncoding  = "float64le"
	maxHeaderLen = 64 << 20 // a header is K alphas, parameters and provenance
	// maxEntries bounds K·V (and V) claimed by a header before anything is
	// allocated: 2^36 float64s is half a terabyte, beyond any model this
	// project trains. Within the bound, memory grows only as data arrives.
	maxEntries = 1 << 36
	chunkBytes = 1 << 20
)

// ErrNotModel is returned (wrapped) when a file does not start with the
// model file's magic bytes.
var ErrNotModel = errors.New("not a fedtopic model file")

// ErrTruncated is returned (wrapped) when a model file ends early.
var ErrTruncated = errors.New("truncated")

// fileHeader is the JSON header of the model file.
type fileHeader struct {
	K          int        `json:"k"`
	V          int        `json:"v"`
	Alpha      []float64  `json:"alpha,omitempty"`
	Beta       float64    `json:"beta"`
	Phi        string     `json:"phi"`
	Provenance Provenance `json:"provenance"`
}

// castagnoli returns a fresh CRC-32C hash.
func castagnoli() hash.Hash32 { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) }

// Write writes m to w in the model file format. It validates m first and
// writes nothing if m is invalid.
func (m *Model) Write(w io.Writer) error {
	if err := m.invalid(); err != nil {
		return fmt.Errorf("topic: write model: %w", err)
	}
	return m.write(w)
}

// write writes the valid model m to w.
func (m *Model) write(w io.Writer) error {
	hdr, err := json.Marshal(fileHeader{
		K: m.K, V: m.V, Alpha: m.Alpha, Beta: m.Beta, Phi: phiEncoding, Provenance: m.Prov,
	})
	if err != nil {
		return fmt.Errorf("topic: write model: encode header: %w", err)
	}
	if len(hdr) > maxHeaderLen {
		return fmt.Errorf("topic: write model: header is %d bytes, more than the format's %d", len(hdr), maxHeaderLen)
	}
	crc := castagnoli()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var buf [binary.MaxVarintLen64]byte
	bw.WriteString(magic)
	binary.LittleEndian.PutUint32(buf[:], FormatVersion)
	bw.Write(buf[:4])
	binary.LittleEndian.PutUint32(buf[:], uint32(len(hdr)))
	bw.Write(buf[:4])
	bw.Write(hdr)
	vocabLen := 0
	for _, s := range m.Vocab {
		vocabLen += binary.PutUvarint(buf[:], uint64(len(s))) + len(s)
	}
	binary.LittleEndian.PutUint64(buf[:], uint64(vocabLen))
	bw.Write(buf[:8])
	for _, s := range m.Vocab {
		bw.Write(buf[:binary.PutUvarint(buf[:], uint64(len(s)))])
		bw.WriteString(s)
	}
	for _, x := range m.Phi {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(x))
		bw.Write(buf[:8])
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("topic: write model: %w", err)
	}
	binary.LittleEndian.PutUint32(buf[:], crc.Sum32())
	if _, err := w.Write(buf[:4]); err != nil {
		return fmt.Errorf("topic: write model: %w", err)
	}
	return nil
}

// Save writes m to path atomically: to a temporary file in the same
// directory, synced to disk, then renamed over path, and the directory
// synced. A crash leaves either the old file or the complete new one.
func Save(path string, m *Model) error {
	if err := m.invalid(); err != nil {
		return fmt.Errorf("topic: save %s: %w", path, err)
	}
	if err := atomicfile.Write(path, 0o644, m.write); err != nil {
		return fmt.Errorf("topic: save model: %w", err)
	}
	return nil
}

// Load reads the model file at path and validates it. Errors name the file
// and say what is wrong: not a model file, an unknown format version,
// truncation, a checksum mismatch or an inconsistent model.
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topic: load model: %w", err)
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	m, err := read(f, size)
	if err != nil {
		return nil, fmt.Errorf("topic: load model %s: %w", path, err)
	}
	return m, nil
}

// Read reads one model in the model file format from r and validates it.
// It reads exactly the model's bytes. Memory grows only as data arrives, so
// a corrupt header cannot make it allocate more than the input holds.
func Read(r io.Reader) (*Model, error) {
	m, err := read(r, -1)
	if err != nil {
		return nil, fmt.Errorf("topic: read model: %w", err)
	}
	return m, nil
}

// read decodes a model from r. If size ≥ 0 it is the total input length,
// used to report truncation and trailing data before reading Φ.
func read(r io.Reader, size int64) (*Model, error) {
	crc := castagnoli()
	tr := io.TeeReader(r, crc)
	var b [8]byte
	if _, err := io.ReadFull(tr, b[:8]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrNotModel
		}
		return nil, err
	}
	if string(b[:8]) != magic {
		return nil, ErrNotModel
	}
	if err := readFull(tr, b[:8], "format version"); err != nil {
		return nil, err
	}
	version := binary.LittleEndian.Uint32(b[:4])
	switch {
	case version > FormatVersion:
		return nil, fmt.Errorf("model file format version %d is newer than this fedtopic reads (version %d); upgrade fedtopic", version, FormatVersion)
	case version < 1:
		return nil, fmt.Errorf("unknown model file format version %d (this fedtopic reads version %d)", version, FormatVersion)
	}
	hdrLen := binary.LittleEndian.Uint32(b[4:8])
	if hdrLen > maxHeaderLen {
		return nil, fmt.Errorf("header length %d exceeds the format's %d bytes", hdrLen, maxHeaderLen)
	}
	if size >= 0 && int64(hdrLen) > size-16 {
		return nil, fmt.Errorf("%w: header of %d bytes, file has %d", ErrTruncated, hdrLen, size)
	}
	hdrBytes, err := readBytes(tr, int64(hdrLen), "header")
	if err != nil {
		return nil, err
	}
	var hdr fileHeader
	if err := json.Unmarshal(hdrBytes, &hdr); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if hdr.Phi != phiEncoding {
		return nil, fmt.Errorf("header: Φ encoding %q, want %q", hdr.Phi, phiEncoding)
	}
	if hdr.K < 1 || hdr.V < 1 || hdr.V > maxEntries || hdr.K > maxEntries/hdr.V {
		return nil, fmt.Errorf("header: K = %d, V = %d: want K, V ≥ 1 and K×V ≤ %d", hdr.K, hdr.V, int64(maxEntries))
	}
	if err := readFull(tr, b[:8], "vocabulary length"); err != nil {
		return nil, err
	}
	vocabLen := binary.LittleEndian.Uint64(b[:8])
	if vocabLen > maxEntries {
		return nil, fmt.Errorf("vocabulary section of %d bytes is implausibly large", vocabLen)
	}
	if size >= 0 {
		want := 16 + int64(hdrLen) + 8 + int64(vocabLen) + 8*int64(hdr.K)*int64(hdr.V) + 4
		if size < want {
			return nil, fmt.Errorf("%w: file has %d bytes, its header describes %d", ErrTruncated, size, want)
		}
		if size > want {
			return nil, fmt.Errorf("file has %d bytes, %d more than its header describes", size, size-want)
		}
	}
	vocab, err := readVocab(tr, int64(vocabLen), hdr.V)
	if err != nil {
		return nil, err
	}
	phi, err := readFloats(tr, hdr.K*hdr.V)
	if err != nil {
		return nil, err
	}
	sum := crc.Sum32()
	if err := readFull(r, b[:4], "checksum"); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(b[:4]); got != sum {
		return nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x): the file is corrupt", got, sum)
	}
	m := &Model{Phi: phi, K: hdr.K, V: hdr.V, Vocab: vocab, Alpha: hdr.Alpha, Beta: hdr.Beta, Prov: hdr.Provenance}
	if err := m.invalid(); err != nil {
		return nil, err
	}
	return m, nil
}

// readFull is io.ReadFull reporting a short read as truncation of what.
func readFull(r io.Reader, b []byte, what string) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: file ends in the %s", ErrTruncated, what)
		}
		return err
	}
	return nil
}

// readBytes reads n bytes, growing the buffer only as data arrives.
func readBytes(r io.Reader, n int64, what string) ([]byte, error) {
	var out []byte
	for int64(len(out)) < n {
		step := int(min(n-int64(len(out)), chunkBytes))
		out = slices.Grow(out, step)[:len(out)+step]
		if err := readFull(r, out[len(out)-step:], what); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readVocab decodes the vocabulary section of n bytes holding v words.
func readVocab(r io.Reader, n int64, v int) ([]string, error) {
	data, err := readBytes(r, n, "vocabulary")
	if err != nil {
		return nil, err
	}
	vocab := make([]string, 0, min(v, len(data)))
	for len(data) > 0 {
		l, k := binary.Uvarint(data)
		if k <= 0 || l > uint64(len(data)-k) {
			return nil, fmt.Errorf("vocabulary: word %d overruns the section", len(vocab))
		}
		vocab = append(vocab, string(data[k:k+int(l)]))
		data = data[k+int(l):]
	}
	if len(vocab) != v {
		return nil, fmt.Errorf("vocabulary has %d words, header says V = %d", len(vocab), v)
	}
	return vocab, nil
}

// readFloats reads n little-endian float64s, growing the result only as
// data arrives.
func readFloats(r io.Reader, n int) ([]float64, error) {
	out := make([]float64, 0, min(n, chunkBytes/8))
	buf := make([]byte, chunkBytes)
	for len(out) < n {
		step := min(n-len(out), chunkBytes/8)
		if err := readFull(r, buf[:8*step], "topic-word matrix"); err != nil {
			return nil, err
		}
		for i := range step {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:])))
		}
	}
	return out, nil
}
