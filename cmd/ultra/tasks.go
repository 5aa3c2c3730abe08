package main

import "github.com/spf13/cobra"

func newTasksCmd() *cobra.Command {
	return &cobra.Command{Use: "tasks", Short: "Every run and session in flight", Hidden: true}
}

func newReportCmd() *cobra.Command {
	return &cobra.Command{Use: "report [RUN]", Short: "Tokens and cost by run, mode and model", Hidden: true}
}
