package budget

import (
	"fmt"
	"strconv"
	"strings"
)

// Register says how a fragment may be treated under a budget.
type Register uint8

// The registers. Binding is the zero value: a fragment says otherwise or it
// is a rule, and rules are never shed.
const (
	Binding Register = iota
	Considered
	Craft
	Generated
)

var registerNames = [...]string{"binding", "considered", "craft", "generated"}

// String returns the register's name.
func (r Register) String() string {
	if int(r) < len(registerNames) {
		return registerNames[r]
	}
	return "register(" + strconv.Itoa(int(r)) + ")"
}

// ParseRegister reads a register name.
func ParseRegister(s string) (Register, error) {
	for i, n := range registerNames {
		if s == n {
			return Register(i), nil
		}
	}
	return Binding, fmt.Errorf("unknown register %q (want one of %s)", s, strings.Join(registerNames[:], ", "))
}
