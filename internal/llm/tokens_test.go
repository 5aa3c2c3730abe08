package llm

import "testing"

func TestCountTokens(t *testing.T) {
	if n := CountTokens("hello world"); n != 2 {
		t.Fatalf("hello world = %d tokens, want 2", n)
	}
	long := ""
	for range 1000 {
		long += "func main() { fmt.Println(\"x\") }\n"
	}
	n := CountTokens(long)
	if n < 5000 || n > 15000 {
		t.Fatalf("estimate %d out of range", n)
	}
	if MessageTokens(Message{Content: "hi", ToolCalls: []ToolCall{{Name: "read", Arguments: `{"file_path":"a"}`}}}) < 10 {
		t.Fatal("message overhead")
	}
}
