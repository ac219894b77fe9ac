package witness

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// algCosignatureV1 is the signature type byte of an Ed25519 cosignature/v1
// key. It stands where note's Ed25519 keys have 0x01, so a witness key can
// never be taken for a note key, nor the other way round: a cosignature
// message is itself well-formed note text, and one key signing both would
// let a signed note pass as a cosignature.
const algCosignatureV1 = 0x04

// GenerateKey returns a new cosignature/v1 key pair named name, in note's
// text formats with the signature type 0x04: skey
// ("PRIVATE+KEY+name+hash+base64(0x04||seed)") for the witness and vkey
// ("name+hash+base64(0x04||public key)") for whoever checks its
// cosignatures. The hash is the spec's key ID, which is note's key hash
// over the typed public key.
func GenerateKey(rand io.Reader, name string) (skey, vkey string, err error) {
	if !validName(name) {
		return "", "", &KeyError{Name: name, Reason: "a key name is non-empty, with no space, + or control character"}
	}
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return "", "", err
	}
	typedPub := append([]byte{algCosignatureV1}, pub...)
	typedSeed := append([]byte{algCosignatureV1}, priv.Seed()...)
	hash := keyID(name, typedPub)
	skey = fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, hash, base64.StdEncoding.EncodeToString(typedSeed))
	vkey = fmt.Sprintf("%s+%08x+%s", name, hash, base64.StdEncoding.EncodeToString(typedPub))
	return skey, vkey, nil
}

// ErrBadKey is matched by every *KeyError: a key text that is not a
// cosignature/v1 key (witness.ErrBadKey is this error).
var ErrBadKey = errors.New("not a witness key")

// KeyError is a key text that is not a cosignature/v1 key.
type KeyError struct {
	Name   string // the key's name, as far as it could be read
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("witness key %q: %s", e.Name, e.Reason)
}

// Is makes a KeyError match ErrBadKey.
func (e *KeyError) Is(target error) bool { return target == ErrBadKey }

func validName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r == '+' || r == 0x7f
	})
}

func keyID(name string, typedPub []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte("\n"))
	h.Write(typedPub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// parseKey splits name+hash+base64 and checks the type byte and length.
func parseKey(text string, size int) (name string, hash uint32, material []byte, err error) {
	name, rest, ok1 := strings.Cut(text, "+")
	hexHash, b64, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 || !validName(name) {
		return name, 0, nil, &KeyError{Name: name, Reason: "not of the form name+hash+base64"}
	}
	h, err := strconv.ParseUint(hexHash, 16, 32)
	if err != nil || len(hexHash) != 8 {
		return name, 0, nil, &KeyError{Name: name, Reason: "the key hash is not 8 hex digits"}
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != 1+size {
		return name, 0, nil, &KeyError{Name: name, Reason: "the key material is not base64 of a type byte and an Ed25519 key"}
	}
	if raw[0] != algCosignatureV1 {
		return name, 0, nil, &KeyError{Name: name, Reason: fmt.Sprintf("signature type 0x%02x, want 0x04 (cosignature/v1); a note key from keygen is not a witness key", raw[0])}
	}
	return name, uint32(h), raw[1:], nil
}

// NewVerifier returns a note.Verifier of cosignature/v1 signatures by the
// witness whose verifier key is vkey (GenerateKey's). Given to note.Open
// beside the log's verifier, it checks a cosigned checkpoint.
func NewVerifier(vkey string) (note.Verifier, error) {
	name, hash, pub, err := parseKey(vkey, ed25519.PublicKeySize)
	if err != nil {
		return nil, err
	}
	if keyID(name, append([]byte{algCosignatureV1}, pub...)) != hash {
		return nil, &KeyError{Name: name, Reason: "the key hash does not match the key"}
	}
	return &verifier{name: name, hash: hash, pub: ed25519.PublicKey(pub)}, nil
}

type verifier struct {
	name string
	hash uint32
	pub  ed25519.PublicKey
}

func (v *verifier) Name() string    { return v.name }
func (v *verifier) KeyHash() uint32 { return v.hash }

// Verify checks a timestamped_signature: 8 bytes of big-endian POSIX time,
// then the Ed25519 signature of the cosigned message.
func (v *verifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	if t > math.MaxInt64 {
		return false
	}
	return ed25519.Verify(v.pub, cosignedMessage(t, msg), sig[8:])
}

// cosignedMessage is the cosignature/v1 header and time lines, then the
// checkpoint's note text.
func cosignedMessage(t uint64, text []byte) []byte {
	m := make([]byte, 0, 40+len(text))
	m = append(m, "cosignature/v1\ntime "...)
	m = strconv.AppendUint(m, t, 10)
	m = append(m, '\n')
	return append(m, text...)
}

// signer is a cosignature/v1 note.Signer; now is its clock.
type signer struct {
	name string
	hash uint32
	priv ed25519.PrivateKey
	now  func() time.Time
}

func newSigner(skey string, now func() time.Time) (*signer, error) {
	rest, ok := strings.CutPrefix(skey, "PRIVATE+KEY+")
	if !ok {
		return nil, &KeyError{Reason: "a witness signer key starts with PRIVATE+KEY+ (promptloom keygen --witness writes NAME.key)"}
	}
	name, hash, seed, err := parseKey(rest, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	priv := ed25519.NewKeyFromSeed(seed)
	typedPub := append([]byte{algCosignatureV1}, priv.Public().(ed25519.PublicKey)...)
	if keyID(name, typedPub) != hash {
		return nil, &KeyError{Name: name, Reason: "the key hash does not match the key"}
	}
	return &signer{name: name, hash: hash, priv: priv, now: now}, nil
}

func (s *signer) Name() string    { return s.name }
func (s *signer) KeyHash() uint32 { return s.hash }

func (s *signer) Sign(msg []byte) ([]byte, error) {
	t := s.now().Unix()
	if t < 0 {
		return nil, fmt.Errorf("witness %s: the clock is before 1970", s.name)
	}
	sig := make([]byte, 8, 8+ed25519.SignatureSize)
	binary.BigEndian.PutUint64(sig, uint64(t))
	return append(sig, ed25519.Sign(s.priv, cosignedMessage(uint64(t), msg))...), nil
}

func (s *signer) verifier() note.Verifier {
	return &verifier{name: s.name, hash: s.hash, pub: s.priv.Public().(ed25519.PublicKey)}
}

// line is the note signature line of sig by s.
func (s *signer) line(sig []byte) string {
	b := binary.BigEndian.AppendUint32(nil, s.hash)
	return "— " + s.name + " " + base64.StdEncoding.EncodeToString(append(b, sig...)) + "\n"
}
