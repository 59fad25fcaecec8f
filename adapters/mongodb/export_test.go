package mongoadapter

// SetAccountsCollectionForTest makes a use the collection name for accounts,
// bypassing New's check of the name, so that a test can make every command
// on accounts fail (with a name such as "bad$name" that the server refuses).
func SetAccountsCollectionForTest(a *Adapter, name string) {
	a.accounts = a.db.Collection(name)
}
