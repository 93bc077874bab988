package canary

import "strings"

// A retry token (RetryToken) has two parts, the spec's and the
// annotation's; the last handled one is recorded in the status. Each part
// asks for a retry when it is set and differs from the part handled: a
// part that went away (the canary strategy removed with its spec field,
// the annotation cleared) asks for nothing, so a retry handled while the
// canary ran is not taken for a new one once half of its token is gone.

// RetryAsked reports whether token asks for a retry that handled, the last
// token handled, has not seen.
func RetryAsked(token, handled string) bool {
	spec, ann := retryParts(token)
	handledSpec, handledAnn := retryParts(handled)
	return spec != "" && spec != handledSpec || ann != "" && ann != handledAnn
}

// RetryHandled is the handled token to record once token was acted upon or
// seen: each part token sets replaces handled's, and a part it lacks keeps
// handled's, which a part set again to the same value then does not retry.
func RetryHandled(token, handled string) string {
	if token == "" {
		return handled
	}
	spec, ann := retryParts(token)
	handledSpec, handledAnn := retryParts(handled)
	if spec == "" {
		spec = handledSpec
	}
	if ann == "" {
		ann = handledAnn
	}
	return spec + "/" + ann
}

// retryParts splits a token into its spec and annotation parts.
func retryParts(token string) (spec, ann string) {
	spec, ann, _ = strings.Cut(token, "/")
	return spec, ann
}
