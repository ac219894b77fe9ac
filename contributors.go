package promptloom

import (
	"strconv"
	"strings"
)

// SystemItem is item index of the list-form system option. A non-blank title
// renders as a heading, "## TITLE\nCONTENT", with title and content trimmed
// (Harn's rendering); the index is the item's place in the list as given, so
// a disabled item still uses up its index.
func SystemItem(index int, title, content string, bucket Bucket) Fragment {
	id := "system[" + strconv.Itoa(index) + "]"
	body := content
	if t := strings.TrimSpace(title); t != "" {
		body = "## " + t + "\n" + strings.TrimSpace(content)
	}
	return Fragment{ID: id, Source: id, Bucket: bucket, Body: body}
}

// Primary is the primary block given as one string.
func Primary(body string) Fragment {
	return Fragment{ID: "primary", Source: "primary", Body: body}
}

// PrimaryPart is item index of a decomposed primary block
// (_system_fragments), with its default id and source; callers override
// them when the item names its own.
func PrimaryPart(index int, body string) Fragment {
	return Fragment{ID: "primary[" + strconv.Itoa(index) + "]", Source: "primary", Body: body}
}

// Profile is item index of context_profile.prompt_fragments. Profile
// fragments always go before the primary block.
func Profile(index int, body string) Fragment {
	return Fragment{ID: "profile[" + strconv.Itoa(index) + "]", Source: "profile", Body: body}
}

// ToolGuidance is a tool's guidance, gated on the tool itself so that the
// instruction and the tool can never drift apart.
func ToolGuidance(tool, guidance string) Fragment {
	return Fragment{
		ID:            "tool:" + tool + ".guidance",
		Source:        "tool:" + tool,
		Body:          guidance,
		RequiresTools: []string{tool},
	}
}

// Replacement is the exclusive replacement root: content is the whole
// system prompt, untrimmed, and every other contributor is suppressed.
func Replacement(content string) Fragment {
	return Fragment{ID: "replacement", Source: "caller", Producer: "caller", Body: content, Verbatim: true}
}
