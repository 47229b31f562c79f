package main

import (
	"strings"
	"testing"
)

// A table gives each shape's median as the middle round, or for an even
// count of rounds the mean of the two in the middle, and lists the rounds
// as they ran, the shapes in the order given.
func TestTablesGiveTheMeanOfTheTwoMiddleRoundsOfAnEvenCount(t *testing.T) {
	var out strings.Builder
	printMedians(&out, "what", "figure", []string{"zeta", "alpha", "odd"}, map[string][]float64{
		"zeta": {4, 1, 3, 2}, "alpha": {10, 20}, "odd": {5, 1, 3},
	})
	want := "| what | figure | rounds |\n|---|---|---|\n" +
		"| zeta | 2.50 | 4.00, 1.00, 3.00, 2.00 |\n" +
		"| alpha | 15.00 | 10.00, 20.00 |\n" +
		"| odd | 3.00 | 5.00, 1.00, 3.00 |\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
