// Package storetest checks an event store against everything
// eventlog.Store promises, in the manner of testing/fstest: each store's
// own tests call it with a function that opens a fresh, empty store.
package storetest
