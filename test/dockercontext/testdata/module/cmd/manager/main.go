// Command manager is the fixture's binary.
package main

import "example.com/fixture/lib"

func main() { println(lib.Query) }
