// Package template is Harn's prompt-template language, byte for byte: the
// engine behind Harn's render, render_prompt and render_string, for
// .prompt and .harn.prompt files and inline templates.
//
// A template interpolates paths ({{ user.name }}, {{ items[-1] }},
// {{ config["api-key"] }}) through filters ({{ name | upper | default: "anon" }}),
// branches with {{ if }} / {{ elif }} / {{ else }} / {{ end }}, loops
// with {{ for x in xs }} (and {{ for k, v in dict }}, in key order) with
// loop.index, loop.first and the rest, and an {{ else }} for an empty
// iterable; it includes other files ({{ include "p.prompt" with { x: y } }})
// relative to the including file, keeps comments ({{# #}}) out, writes
// raw blocks verbatim and trims a line around {{- and -}}. Sections
// ({{ section "task" }}...{{ endsection }}) render as Harn renders them
// outside a model frame, shaped by an llm binding's capabilities when
// there is one. A legacy bare {{ name }} bound to nothing is written back
// as {{name}}. Errors carry Harn's text and position: "<path> at
// <line>:<col>: <what>".
//
// Beyond Harn, a render says where every output byte came from
// (Result.Spans, each a promptloom.Span) and
// which bindings it read, so a manifest can record them and "why is this
// sentence here?" can name the template line or the binding. Rendering is
// bounded: the output, each file and the work done are held to
// Options.MaxBytes, blocks and expressions nest at most Options.MaxDepth
// deep, includes 32 deep, and no include leaves its directory.
//
// docs/templates.md describes the language as implemented.
package template
