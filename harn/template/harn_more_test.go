package template_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/promptloom/promptloom/harn/template"
)

// The unit tests of Harn's directives.rs, outline.rs, lint.rs and
// filters.rs (crates/harn-vm/src/stdlib/template of
// github.com/burin-labs/harn), ported under their names. Those modules
// project the one template parse for editors and harn-lint; promptloom has
// neither projection, so what is ported is what each test proves of the
// parser itself: the templates it parses (every lint and outline test
// starts by requiring that the template parses) and the errors it
// reports. The geometry and lint classification they then assert are
// listed in notPorted (harn_test.go).

func parseSrc(src string) error {
	_, err := template.Parse("", []byte(src), nil)
	return err
}

// TestHarnDirectives: directives.rs's tests, which drive the parser to
// prove every pairing the directive vocabulary declares.
func TestHarnDirectives(t *testing.T) {
	// opener is directives.rs's opener_body: a minimal well-formed block
	// for each keyword that opens one, with the keyword that closes it.
	opener := []struct{ keyword, closer, src string }{
		{"if", "end", "{{ if a }}\nx\n{{ end }}"},
		{"for", "end", "{{ for x in xs }}\nx\n{{ end }}"},
		{"section", "endsection", "{{ section \"task\" }}\nx\n{{ endsection }}"},
		{"raw", "endraw", "{{ raw }}\nx\n{{ endraw }}"},
	}
	t.Run("every_declared_pairing_is_what_the_parser_accepts", func(t *testing.T) {
		for _, o := range opener {
			if err := parseSrc(o.src); err != nil {
				t.Errorf("`{{ %s }}` closed by `{{ %s }}` should parse: %v", o.keyword, o.closer, err)
			}
		}
	})
	t.Run("no_opener_accepts_an_end_prefixed_spelling_of_itself", func(t *testing.T) {
		for _, c := range []struct{ opener, wrong string }{{"if", "endif"}, {"for", "endfor"}} {
			var src string
			for _, o := range opener {
				if o.keyword == c.opener {
					src = strings.ReplaceAll(o.src, o.closer, c.wrong)
				}
			}
			err := parseSrc(src)
			var te *template.Error
			if !errors.As(err, &te) {
				t.Fatalf("%q: a block closed with the wrong keyword must not parse (got %v)", src, err)
			}
			if !strings.Contains(te.Error(), "missing matching") {
				t.Errorf("unexpected message for `{{ %s }}`: %s", c.wrong, te.Error())
			}
		}
	})
	t.Run("a_stray_end_prefixed_keyword_is_silently_a_variable", func(t *testing.T) {
		if err := parseSrc("intro\n{{ endif }}\n"); err != nil {
			t.Errorf("should parse as a variable lookup: %v", err)
		}
	})
	t.Run("continuations_parse_inside_the_blocks_that_declare_them", func(t *testing.T) {
		for _, src := range []string{
			"{{ if a }}\nx\n{{ elif b }}\ny\n{{ end }}",
			"{{ if a }}\nx\n{{ else }}\ny\n{{ end }}",
			"{{ for x in xs }}\nx\n{{ else }}\nnone\n{{ end }}",
		} {
			if err := parseSrc(src); err != nil {
				t.Errorf("%q: %v", src, err)
			}
		}
	})
}

// TestHarnOutline: outline.rs's tests, as far as they are the parser's:
// each template parses (the block ranges they assert are an editor
// projection promptloom does not have), and an unclosed block's error
// points at the directive that opened it.
func TestHarnOutline(t *testing.T) {
	for name, src := range map[string]string{
		"every_branch_of_a_chain_closes_at_the_shared_end":    "{{ if a }}A{{ elif b }}B{{ else }}C{{ end }}",
		"a_loop_covers_its_empty_fallback":                    "{{ for x in xs }}{{ x }}{{ else }}none{{ end }}",
		"sections_raw_blocks_and_comments_are_all_located":    "{{# note #}}{{ section \"task\" }}{{ raw }}{{x}}{{ endraw }}{{ endsection }}",
		"nested_blocks_come_back_in_source_order":             "{{ for x in xs }}{{ if x }}y{{ end }}{{ end }}",
		"loops_report_the_names_they_bind/one":                "{{ for item in items }}x{{ end }}",
		"loops_report_the_names_they_bind/two":                "{{ for key, value in dict }}x{{ end }}",
		"loops_report_the_names_they_bind/else":               "{{ for x in xs }}a{{ else }}b{{ end }}",
		"only_loops_bind_names":                               "{{ if a }}x{{ end }}{{ section \"task\" }}y{{ endsection }}",
		"a_template_without_blocks_has_an_empty_outline":      "Hello {{ name }}, welcome.",
		"trim_markers_do_not_shift_a_block_off_its_directive": "{{- if a -}}A{{- end -}}",
	} {
		t.Run(name, func(t *testing.T) {
			if err := parseSrc(src); err != nil {
				t.Errorf("%q: %v", src, err)
			}
		})
	}
	t.Run("an_unclosed_block_reports_where_it_opened", func(t *testing.T) {
		err := parseSrc("intro\n{{ if a }}\nbody\n")
		var te *template.Error
		if !errors.As(err, &te) {
			t.Fatalf("unclosed `{{ if }}`: got %v", err)
		}
		if te.Line != 2 || te.Col != 1 {
			t.Errorf("at %d:%d, want 2:1", te.Line, te.Col)
		}
		if !strings.Contains(te.Error(), "missing matching `{{ end }}`") {
			t.Errorf("unexpected message: %s", te.Error())
		}
	})
}

// TestHarnLint: lint.rs's tests, as far as they are the parser's: each
// template parses (lint's parse is the engine's parse), and the parser's
// depth limits hold with their messages.
func TestHarnLint(t *testing.T) {
	terms := make([]string, 0, 301)
	for i := 0; i < 300; i++ {
		terms = append(terms, fmt.Sprintf("flag%d", i))
	}
	terms = append(terms, "llm.capabilities.native_tools")
	for name, src := range map[string]string{
		"filter_uses_carry_exact_name_ranges":                      `{{ name | uppr | default: "| not_a_filter" }}`,
		"logical_or_comments_and_raw_text_are_not_filters":         "{{ if a || b }}x{{ end }}\n{{# ignored | nope #}}\n{{ raw }}{{ value | nope }}{{ endraw }}\n",
		"provider_identity_eq_detected":                            `{{ if llm.provider == "anthropic" }}x{{ else }}y{{ end }}`,
		"model_identity_neq_detected":                              `{{ if llm.model != "gpt-5" }}x{{ end }}`,
		"capability_flag_detected_in_negation_and_filter":          "{{ if !llm.capabilities.native_tools }}x{{ end }}{{ if llm.capabilities.prefers_xml_scaffolding | default: false }}y{{ end }}",
		"capability_flag_detection_handles_wide_binary_expression": fmt.Sprintf("{{ if %s }}x{{ end }}", strings.Join(terms, " or ")),
		"elif_chain_lifts_per_branch_condition":                    `{{ if llm.provider == "openai" }}a{{ elif llm.capabilities.native_tools }}b{{ else }}c{{ end }}`,
		"unrelated_condition_falls_through_to_other":               "{{ if score > 0.5 }}a{{ end }}",
		"sections_listed_in_source_order":                          `{{ section "task" }}t{{ endsection }}{{ section "output_format" }}o{{ endsection }}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := parseSrc(src); err != nil {
				t.Errorf("template should parse: %v", err)
			}
		})
	}
	// Harn's RuntimeLimits::DEFAULT.max_template_ast_depth.
	const depthLimit = 128
	depthErr := func(t *testing.T, src, what string) {
		t.Helper()
		err := parseSrc(src)
		var te *template.Error
		if !errors.As(err, &te) {
			t.Fatalf("depth limit: got %v", err)
		}
		if !strings.Contains(te.Error(), what) || !strings.Contains(te.Error(), fmt.Sprintf("(%d levels)", depthLimit)) {
			t.Errorf("got %q, want %q and (%d levels)", te.Error(), what, depthLimit)
		}
	}
	t.Run("parse_reports_template_control_depth_limit", func(t *testing.T) {
		const depth = depthLimit + 1
		src := strings.Repeat("{{ if true }}", depth) + "x" + strings.Repeat("{{ end }}", depth)
		depthErr(t, src, "template nesting depth exceeded")
	})
	t.Run("parse_reports_template_expression_depth_limit", func(t *testing.T) {
		const depth = depthLimit + 1
		src := fmt.Sprintf("{{ if %sllm.capabilities.native_tools }}x{{ end }}", strings.Repeat("!", depth))
		depthErr(t, src, "template expression depth exceeded")
	})
}

// TestHarnFilters: filters.rs's declared_filters_match_the_dispatch_arms,
// which holds Harn's filter dispatch to the declared vocabulary. Here the
// engine must know exactly those filters: each answers a call with three
// arguments (more than any takes) with its arity error, never "unknown
// filter", and a name outside the list is unknown.
func TestHarnFilters(t *testing.T) {
	// vocabulary.rs's FILTERS.
	declared := []string{"capitalize", "default", "escape_md", "first", "indent", "join", "json", "last",
		"length", "lines", "lower", "replace", "reverse", "title", "trim", "upper"}
	t.Run("declared_filters_match_the_dispatch_arms", func(t *testing.T) {
		for _, name := range declared {
			_, err := renderErr(fmt.Sprintf("{{ x | %s: 1, 2, 3 }}", name), `{"x":"a"}`, nil)
			var te *template.Error
			if !errors.As(err, &te) || !strings.HasSuffix(te.Error(), ": "+fmt.Sprintf("filter `%s` got wrong number of arguments", name)) {
				t.Errorf("%s: got %v", name, err)
			}
		}
		for _, name := range []string{"uppr", "escape", "sort", "abs", "format"} {
			_, err := renderErr(fmt.Sprintf("{{ x | %s }}", name), `{"x":"a"}`, nil)
			var te *template.Error
			if !errors.As(err, &te) || !strings.HasSuffix(te.Error(), ": "+fmt.Sprintf("unknown filter `%s`", name)) {
				t.Errorf("%s: got %v", name, err)
			}
		}
	})
}
