package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

const (
	// SignatureHeader carries Sign of the request's body when the request
	// has a signing key.
	SignatureHeader = "X-Extendeddaemonset-Signature"
	// DeliveryHeader carries the caller's delivery id, the same on every
	// attempt of one delivery, so that a receiver can drop repeats.
	DeliveryHeader = "X-Extendeddaemonset-Delivery"

	// signaturePrefix names the algorithm, as GitHub's webhooks do, so that
	// receivers written for them verify ours unchanged.
	signaturePrefix = "sha256="
)

// Sign is the value of SignatureHeader for body: "sha256=" followed by the
// hex-encoded HMAC-SHA256 of body with key.
func Sign(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verify is true when signature is Sign(key, body); it compares in
// constant time, as a receiver should.
func Verify(key, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(key, body)), []byte(signature))
}
