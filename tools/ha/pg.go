package main

func pgCmd(args []string) error { return nil }
