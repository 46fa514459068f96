// Package netcheck is `etcdbench net`: a check of the network between
// two nodes before etcd runs on them, as `disk wal` checks a disk. One
// node runs a listener (Serve); another sends it etcd-shaped traffic
// (Check): heartbeat-sized messages, append batches beside them and a
// snapshot-sized stream, and judges the round trips against etcd's and
// OpenShift's limits, with the timeouts to set.
//
// The listener answers only its own protocol, to a peer that proves it
// holds the shared token, and never sends more bytes on a connection
// than it received on it: it echoes messages and acknowledges a stream
// with a count.
package netcheck

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// magic opens both sides' hello: "EBNET1 " and a nonce in hex, a line.
const magic = "EBNET1"

// Frame types, each a byte, a big-endian uint32 length and the payload.
const (
	framePing byte = 'P' // echoed as it came
	frameData byte = 'S' // a stream's bytes: counted, not answered
	frameEnd  byte = 'E' // a stream's end: answered with frameAck
	frameAck  byte = 'A' // the stream's byte count, 8 bytes
)

// maxFrame bounds a frame's payload.
const maxFrame = 1 << 20

// headerLen is a frame's type and length.
const headerLen = 5

// The errors a peer's check ends with; cmd maps them to exit codes.
var (
	// ErrNotListener: the address answered, but not as etcdbench's
	// listener (bad input: exit 2).
	ErrNotListener = errors.New("not etcdbench's net listener")
	// ErrToken: the listener refused the token (bad input: exit 2).
	ErrToken = errors.New("the listener refused the token")
	// ErrUnreachable: nothing answered at the address (exit 3).
	ErrUnreachable = errors.New("cannot reach the listener")
)

// nonce is 16 random bytes in hex.
func nonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// proof is what a peer holding token answers to the two nonces.
func proof(token, server, client string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(server + " " + client))
	return hex.EncodeToString(m.Sum(nil))
}

// hello is a side's first line.
func hello() string { return magic + " " + nonce() + "\n" }

// readLine reads one line of at most max bytes (the newline included).
func readLine(r *bufio.Reader, max int) (string, error) {
	var b strings.Builder
	for b.Len() < max {
		c, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		if c == '\n' {
			return b.String(), nil
		}
		b.WriteByte(c)
	}
	return "", fmt.Errorf("a line longer than %d bytes", max)
}

// helloNonce is the nonce of a hello line, or "" when it is not one.
func helloNonce(line string) string {
	n, ok := strings.CutPrefix(line, magic+" ")
	if !ok || len(n) != 32 {
		return ""
	}
	if _, err := hex.DecodeString(n); err != nil {
		return ""
	}
	return n
}

// dial connects to a listener at addr and proves the token: the
// connection, ready for frames, with its reader.
func dial(addr, token string, timeout time.Duration) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, nil, fmt.Errorf("%w at %s: %v", ErrUnreachable, addr, err)
	}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	_ = c.SetDeadline(time.Now().Add(timeout))
	r := bufio.NewReader(c)
	mine := hello()
	if _, err := io.WriteString(c, mine); err != nil {
		return nil, nil, fmt.Errorf("%w at %s: %v", ErrUnreachable, addr, err)
	}
	line, err := readLine(r, 64)
	theirs := helloNonce(line)
	if err != nil || theirs == "" {
		return nil, nil, fmt.Errorf("%w: %s did not answer its hello within %v (is `etcdbench net --listen` running there, and this its address?)", ErrNotListener, addr, timeout)
	}
	if _, err := io.WriteString(c, proof(token, theirs, helloNonce(strings.TrimSuffix(mine, "\n")))+"\n"); err != nil {
		return nil, nil, fmt.Errorf("%w at %s: %v", ErrUnreachable, addr, err)
	}
	if line, err = readLine(r, 64); err != nil || line != "OK" {
		return nil, nil, fmt.Errorf("%w at %s: give both sides the same --token", ErrToken, addr)
	}
	_ = c.SetDeadline(time.Time{})
	ok = true
	return c, r, nil
}

// writeFrame writes one frame.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	var h [headerLen]byte
	h[0] = typ
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// readFrame reads one frame into buf (grown as needed).
func readFrame(r io.Reader, buf []byte) (byte, []byte, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("a frame of %d bytes, over %d", n, maxFrame)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return 0, nil, err
	}
	return h[0], buf, nil
}
