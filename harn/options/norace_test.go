//go:build !race

package options

const raceEnabled = false
