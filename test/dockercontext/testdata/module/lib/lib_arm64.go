package lib

// Arch is built on arm64 only.
const Arch = "arm64"
