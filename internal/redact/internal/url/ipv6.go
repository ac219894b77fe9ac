package url

import (
	"strconv"
	"strings"
)

// parseIPv6 is WHATWG's IPv6 parser (as the url crate has it): eight
// 16-bit pieces, at most one "::" standing for a run of zeros, an optional
// dotted IPv4 tail.
func parseIPv6(s string) ([8]uint16, bool) {
	var a [8]uint16
	var head, tail []uint16 // the pieces before and after "::"
	cur := &head
	compressed := false
	i := 0
	if strings.HasPrefix(s, "::") {
		i, compressed, cur = 2, true, &tail
	} else if strings.HasPrefix(s, ":") {
		return a, false
	}
	for i < len(s) {
		if len(head)+len(tail) == 8 {
			return a, false
		}
		if s[i] == ':' {
			if compressed {
				return a, false
			}
			i++
			compressed, cur = true, &tail
			continue
		}
		v, n := 0, 0
		for n < 4 && i < len(s) && isHex(s[i]) {
			v = v<<4 | int(unhex(s[i]))
			i++
			n++
		}
		if i < len(s) && s[i] == '.' {
			if n == 0 || len(head)+len(tail) > 6 {
				return a, false
			}
			v4, ok := parseIPv6Tail(s[i-n:])
			if !ok {
				return a, false
			}
			*cur = append(*cur, uint16(v4>>16), uint16(v4))
			break
		}
		if n == 0 {
			return a, false
		}
		if i < len(s) {
			if s[i] != ':' {
				return a, false
			}
			i++
			if i == len(s) {
				return a, false
			}
		}
		*cur = append(*cur, uint16(v))
	}
	if !compressed && len(head) != 8 {
		return a, false
	}
	copy(a[:], head)
	copy(a[8-len(tail):], tail)
	return a, true
}

// parseIPv6Tail reads the dotted IPv4 part of an IPv6 address: four decimal
// numbers of at most 255, no leading zeros.
func parseIPv6Tail(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return 0, false
	}
	var v uint32
	for _, p := range parts {
		if p == "" || len(p) > 1 && p[0] == '0' || strings.Trim(p, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n > 255 {
			return 0, false
		}
		v = v<<8 | uint32(n)
	}
	return v, true
}

// formatIPv6 writes the pieces in lowercase hex, the first longest run of
// two or more zero pieces compressed to "::".
func formatIPv6(a [8]uint16) string {
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if a[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && a[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == best {
			b.WriteString("::")
			i += bestLen - 1
			continue
		}
		if i > 0 && i != best+bestLen {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatUint(uint64(a[i]), 16))
	}
	return b.String()
}
