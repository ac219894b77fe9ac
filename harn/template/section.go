package template

import (
	"strings"
	"unicode"
)

// A section's rendering: its text and, when the body appears in it, where
// (bodyAt, or -1), with the part of the rendered body that was kept
// (srcStart:srcEnd, the body trimmed of white space).
type sectionText struct {
	text             string
	bodyAt           int
	srcStart, srcEnd int
}

// profile is what a section reads of the llm binding's capabilities
// (Harn's SectionProfile). With no llm binding every switch is off and the
// modes are "none": the plain renderings.
type profile struct {
	xmlScaffold, markdownScaffold, xmlTools, nativeTools, textTools, developer bool
	outputMode, thinking                                                       string
}

func profileOf(llm any) profile {
	p := profile{outputMode: "none", thinking: "none"}
	d, ok := llm.(*dict)
	if !ok {
		return p
	}
	caps, _ := d.get("capabilities")
	c, _ := caps.(*dict)
	flag := func(k string) bool {
		if c == nil {
			return false
		}
		v, _ := c.get(k)
		b, _ := v.(bool)
		return b
	}
	str := func(k string) (string, bool) {
		if c == nil {
			return "", false
		}
		v, _ := c.get(k)
		s, ok := v.(string)
		return s, ok
	}
	p.xmlScaffold = flag("prefers_xml_scaffolding")
	p.markdownScaffold = flag("prefers_markdown_scaffolding")
	p.xmlTools = flag("prefers_xml_tools")
	p.nativeTools = flag("native_tools")
	p.textTools = flag("text_tool_wire_format_supported")
	p.developer = flag("prefers_role_developer")
	if s, ok := str("structured_output_mode"); ok {
		p.outputMode = s
	} else if s, ok := str("structured_output"); ok {
		switch s {
		case "native", "format_kw":
			s = "native_json"
		case "tool_use":
			s = "xml_tagged"
		}
		p.outputMode = s
	}
	if s, ok := str("thinking_block_style"); ok {
		p.thinking = s
	}
	return p
}

// scaffold is "xml", "markdown" or "plain".
func (p profile) scaffold() string {
	switch {
	case p.xmlScaffold:
		return "xml"
	case p.markdownScaffold:
		return "markdown"
	}
	return "plain"
}

// trimBody is the body without leading and trailing white space, and where
// that part starts and ends in it.
func trimBody(body string) (string, int, int) {
	start := len(body) - len(strings.TrimLeftFunc(body, unicode.IsSpace))
	end := start + len(strings.TrimRightFunc(body[start:], unicode.IsSpace))
	return body[start:end], start, end
}

func wrap(content, prefix, suffix string, bodyAt, srcStart, srcEnd int) sectionText {
	at := -1
	if bodyAt >= 0 {
		at = len(prefix) + bodyAt
	}
	return sectionText{text: prefix + content + suffix, bodyAt: at, srcStart: srcStart, srcEnd: srcEnd}
}

// wrapBody wraps the trimmed body; an empty body leaves only the wrapping.
func wrapBody(body, prefix, suffix string) sectionText {
	c, s, e := trimBody(body)
	at := -1
	if c != "" {
		at = 0
	}
	return wrap(c, prefix, suffix, at, s, e)
}

// bodyOrDefault wraps the trimmed body, or def when the body is blank.
func bodyOrDefault(body, def, prefix, suffix string) sectionText {
	c, s, e := trimBody(body)
	if c == "" {
		return wrap(def, prefix, suffix, -1, s, e)
	}
	return wrap(c, prefix, suffix, 0, s, e)
}

var titles = map[string]string{"task": "Task", "examples": "Examples"}

// renderSection is Harn's render_section for a body already rendered.
// args holds the section's evaluated arguments; their JSON is at most
// limit bytes (ok false past it).
func renderSection(name, body string, args map[string]any, llm any, limit int) (sectionText, bool) {
	p := profileOf(llm)
	sc := p.scaffold()
	switch name {
	case "task", "examples":
		switch sc {
		case "xml":
			return wrapBody(body, "<"+name+">\n", "\n</"+name+">"), true
		case "markdown":
			return wrapBody(body, "## "+titles[name]+"\n", ""), true
		}
		return wrapBody(body, titles[name]+":\n", ""), true
	case "system_framing":
		role, title := "system", "System Instructions"
		if p.developer {
			role, title = "developer", "Developer Instructions"
		}
		switch sc {
		case "xml":
			return wrapBody(body, "<"+role+">\n", "\n</"+role+">"), true
		case "markdown":
			return wrapBody(body, "## "+title+"\n", ""), true
		}
		return wrapBody(body, title+":\n", ""), true
	case "output_format":
		if p.outputMode == "native_json" {
			return sectionText{bodyAt: -1, srcEnd: len(body)}, true
		}
		c, s, e := trimBody(body)
		content, at := c, -1
		if c != "" {
			at = 0
		}
		if schema, has := args["schema"]; has {
			j, ok := toJSON(schema, true, limit)
			if !ok {
				return sectionText{}, false
			}
			if content != "" {
				content += "\n\n"
			}
			content += "Return output matching this JSON Schema:\n" + j
		}
		prefix, suffix := "Output Format:\n", ""
		switch {
		case p.outputMode == "xml_tagged" || p.outputMode != "delimited" && sc == "xml":
			prefix, suffix = "<output_format>\n", "\n</output_format>"
		case p.outputMode == "delimited":
			prefix = "[[ ## output_format ## ]]\n"
		case sc == "markdown":
			prefix = "## Output Format\n"
		}
		return wrap(content, prefix, suffix, at, s, e), true
	case "tools":
		tools, hasTools := "", false
		if t, has := args["tools"]; has {
			j, ok := toJSON(t, true, limit)
			if !ok {
				return sectionText{}, false
			}
			tools, hasTools = j, true
		}
		c, s, e := trimBody(body)
		content, at := c, -1
		if c != "" {
			at = 0
		}
		if hasTools {
			if content != "" {
				content += "\n\n"
			}
			content += tools
		}
		switch {
		case p.xmlTools:
			return wrap(content, "<tools>\n", "\n</tools>", at, s, e), true
		case p.nativeTools:
			return wrap(content, "## Tools\n", "", at, s, e), true
		case p.textTools:
			react := "Tools:\nUse this ReAct-style envelope when calling a tool:\nAction: <tool name>\nAction Input: <json arguments>"
			bodyAt := -1
			if c != "" || content != "" {
				react += "\n\nAvailable tools:\n"
				if c != "" {
					bodyAt = len(react)
					react += c
				}
				if hasTools {
					if c != "" {
						react += "\n\n"
					}
					react += tools
				}
			}
			return sectionText{text: react, bodyAt: bodyAt, srcStart: s, srcEnd: e}, true
		}
		return wrap(content, "Tools:\n", "", at, s, e), true
	case "thinking_scaffold":
		switch p.thinking {
		case "thinking_blocks":
			return bodyOrDefault(body, "Think through the task before answering.", "<thinking>\n", "\n</thinking>"), true
		case "reasoning_summary":
			return bodyOrDefault(body, "Use internal reasoning and provide a concise answer.", "## Reasoning\n", ""), true
		case "inline":
			return bodyOrDefault(body, "Reason privately before answering.", "", ""), true
		}
		return sectionText{bodyAt: -1, srcEnd: len(body)}, true
	}
	// chain_of_thought
	const def = "Reason privately step by step before answering."
	switch sc {
	case "xml":
		return bodyOrDefault(body, def, "<reasoning>\n", "\n</reasoning>"), true
	case "markdown":
		return bodyOrDefault(body, def, "## Reasoning\n", ""), true
	}
	return bodyOrDefault(body, def, "", ""), true
}
