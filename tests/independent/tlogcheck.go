// tlogcheck verifies a folder of C2SP tlog-tiles with Go's own transparency-log
// code (golang.org/x/mod/sumdb/tlog and sumdb/note, from Debian's
// golang-golang-x-mod-dev), none of it written for memory-chain. The tests
// (tests/test_tiles_independent.py) build it and run it on what
// `memory-chain publish` wrote.
//
// Usage:
//
//	tlogcheck FOLDER LOG_VKEY [-old CHECKPOINT_FILE] [-witness VKEY]...
//
// It checks the checkpoint's note signature by LOG_VKEY, every tile it needs
// against the checkpoint's root, each entry of the entry bundles by an
// inclusion proof, the consistency of the tree with an older checkpoint, and
// each witness's cosignature (c2sp.org/tlog-cosignature, Ed25519, type 0x04).
// It prints one line "ok size=N entries=N ..." and exits 0, or prints the
// failure and exits 1.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type folderTiles struct{ dir string }

func (f folderTiles) Height() int { return 8 }

// c2spPath maps x/mod's sumdb tile path (tile/8/L/N, tile/8/data/N) to
// c2sp.org/tlog-tiles' (tile/L/N, tile/entries/N).
func c2spPath(t tlog.Tile) string {
	p := strings.TrimPrefix(t.Path(), "tile/8/")
	if strings.HasPrefix(p, "data/") {
		p = "entries/" + strings.TrimPrefix(p, "data/")
	}
	return filepath.Join("tile", filepath.FromSlash(p))
}

func (f folderTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		data, err := os.ReadFile(filepath.Join(f.dir, c2spPath(t)))
		if err != nil {
			return nil, err
		}
		if len(data) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("%s: %d bytes, want %d", c2spPath(t), len(data), t.W*tlog.HashSize)
		}
		out[i] = data
	}
	return out, nil
}

func (f folderTiles) SaveTiles(tiles []tlog.Tile, data [][]byte) {}

// cosigVerifier checks an Ed25519 cosignature/v1 line.
type cosigVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (v cosigVerifier) Name() string    { return v.name }
func (v cosigVerifier) KeyHash() uint32 { return v.hash }
func (v cosigVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	ts := binary.BigEndian.Uint64(sig[:8])
	signed := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", ts)), msg...)
	return ed25519.Verify(v.key, signed, sig[8:])
}

func parseCosigVkey(vkey string) (cosigVerifier, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		return cosigVerifier{}, errors.New("malformed witness vkey")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 33 || raw[0] != 0x04 {
		return cosigVerifier{}, errors.New("witness vkey is not an Ed25519 cosignature key")
	}
	h := sha256.Sum256(append([]byte(parts[0]+"\n"), raw...))
	want := binary.BigEndian.Uint32(h[:4])
	got, err := strconv.ParseUint(parts[1], 16, 32)
	if err != nil || uint32(got) != want {
		return cosigVerifier{}, errors.New("witness vkey hash mismatch")
	}
	return cosigVerifier{parts[0], want, ed25519.PublicKey(raw[1:])}, nil
}

type checkpoint struct {
	origin string
	tree   tlog.Tree
	sigs   []note.Signature
}

func openCheckpoint(path string, verifiers note.Verifiers) (checkpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return checkpoint{}, err
	}
	n, err := note.Open(data, verifiers)
	if err != nil {
		return checkpoint{}, fmt.Errorf("%s: %v", path, err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 {
		return checkpoint{}, fmt.Errorf("%s: not a checkpoint", path)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		return checkpoint{}, fmt.Errorf("%s: bad size", path)
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return checkpoint{}, fmt.Errorf("%s: bad root", path)
	}
	var h tlog.Hash
	copy(h[:], root)
	return checkpoint{lines[0], tlog.Tree{N: size, Hash: h}, n.Sigs}, nil
}

func run(args []string) (string, error) {
	if len(args) < 2 {
		return "", errors.New("usage: tlogcheck FOLDER LOG_VKEY [-old FILE] [-witness VKEY]...")
	}
	dir, logVkey := args[0], args[1]
	var old string
	var witnesses []cosigVerifier
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return "", errors.New("missing value after " + args[i])
		}
		switch args[i] {
		case "-old":
			old = args[i+1]
		case "-witness":
			w, err := parseCosigVkey(args[i+1])
			if err != nil {
				return "", err
			}
			witnesses = append(witnesses, w)
		default:
			return "", errors.New("unknown flag " + args[i])
		}
	}
	logVerifier, err := note.NewVerifier(logVkey)
	if err != nil {
		return "", err
	}
	list := []note.Verifier{logVerifier}
	for _, w := range witnesses {
		list = append(list, w)
	}
	verifiers := note.VerifierList(list...)
	cp, err := openCheckpoint(filepath.Join(dir, "checkpoint"), verifiers)
	if err != nil {
		return "", err
	}
	if cp.origin != logVerifier.Name() {
		return "", fmt.Errorf("origin %q is not the log key's name %q", cp.origin, logVerifier.Name())
	}
	signedByLog := false
	cosigned := map[string]bool{}
	for _, s := range cp.sigs {
		if s.Name == logVerifier.Name() && s.Hash == logVerifier.KeyHash() {
			signedByLog = true
		}
		for _, w := range witnesses {
			if s.Name == w.name && s.Hash == w.hash {
				cosigned[w.name] = true
			}
		}
	}
	if !signedByLog {
		return "", errors.New("the checkpoint is not signed by the log key")
	}
	for _, w := range witnesses {
		if !cosigned[w.name] {
			return "", fmt.Errorf("not cosigned by witness %s", w.name)
		}
	}
	tiles := folderTiles{dir}
	hr := tlog.TileHashReader(cp.tree, tiles)
	th, err := tlog.TreeHash(cp.tree.N, hr)
	if err != nil {
		return "", fmt.Errorf("tree hash from tiles: %v", err)
	}
	if th != cp.tree.Hash {
		return "", errors.New("the tiles do not have the checkpoint's root")
	}
	// Every entry, from the entry bundles, by an inclusion proof.
	entries := int64(0)
	for n := int64(0); n*256 < cp.tree.N; n++ {
		w := cp.tree.N - n*256
		if w > 256 {
			w = 256
		}
		t := tlog.Tile{H: 8, L: -1, N: n, W: int(w)}
		data, err := os.ReadFile(filepath.Join(dir, c2spPath(t)))
		if err != nil {
			return "", err
		}
		r := bytes.NewReader(data)
		for i := int64(0); i < w; i++ {
			var length uint16
			if err := binary.Read(r, binary.BigEndian, &length); err != nil {
				return "", fmt.Errorf("%s: entry %d: %v", c2spPath(t), i, err)
			}
			entry := make([]byte, length)
			if _, err := io.ReadFull(r, entry); err != nil {
				return "", fmt.Errorf("%s: entry %d: %v", c2spPath(t), i, err)
			}
			index := n*256 + i
			proof, err := tlog.ProveRecord(cp.tree.N, index, hr)
			if err != nil {
				return "", fmt.Errorf("entry %d: %v", index, err)
			}
			if err := tlog.CheckRecord(proof, cp.tree.N, cp.tree.Hash, index, tlog.RecordHash(entry)); err != nil {
				return "", fmt.Errorf("entry %d is not in the tree: %v", index, err)
			}
			entries++
		}
	}
	msg := fmt.Sprintf("ok size=%d entries=%d", cp.tree.N, entries)
	if old != "" {
		oc, err := openCheckpoint(old, verifiers)
		if err != nil {
			return "", err
		}
		if oc.origin != cp.origin {
			return "", errors.New("the old checkpoint is of another log")
		}
		proof, err := tlog.ProveTree(cp.tree.N, oc.tree.N, hr)
		if err != nil {
			return "", fmt.Errorf("consistency proof: %v", err)
		}
		if err := tlog.CheckTree(proof, cp.tree.N, cp.tree.Hash, oc.tree.N, oc.tree.Hash); err != nil {
			return "", fmt.Errorf("size %d does not extend size %d: %v", cp.tree.N, oc.tree.N, err)
		}
		msg += fmt.Sprintf(" consistent-from=%d", oc.tree.N)
	}
	if len(witnesses) > 0 {
		msg += fmt.Sprintf(" cosigned-by=%d", len(witnesses))
	}
	return msg, nil
}

func main() {
	msg, err := run(os.Args[1:])
	if err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println(msg)
}
