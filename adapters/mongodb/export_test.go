package mongoadapter

// SetAccountsCollectionForTest makes a use the collection name for accounts,
// bypassing New's check of the name, so that a test can make every command
// on accounts fail (with a name such as "bad$name" that the server refuses).
func SetAccountsCollectionForTest(a *Adapter, name string) {
	a.accounts = a.db.Collection(name)
}

// LockIDForTest is the _id of the lock document of a user's updates (on
// servers whose updates are not atomic).
func LockIDForTest(userID string) string { return lockID(lockUser, userID) }
