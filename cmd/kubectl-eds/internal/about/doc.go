// Package about is the commands of kubectl-eds about the plugin itself:
// version. They need no cluster and never contact one.
package about
