// A chat page on LangGraph's useStream hook, talking to `stategraph serve`: the
// assistant's tokens stream in, its tool calls show with their results, and an
// interrupt (the agent asking before it calls a tool) is answered from the page.
import { useState } from "react";
import { useStream } from "@langchain/langgraph-sdk/react";

// The API is the server that serves this page (`stategraph serve --ui dist`);
// `?api=http://host:port` points the page at another one.
const params = new URLSearchParams(window.location.search);
const apiUrl = params.get("api") ?? window.location.origin;
const assistantId = params.get("assistant") ?? "chat";

function text(content) {
  if (typeof content === "string") return content;
  return (content ?? [])
    .map((part) => (typeof part === "string" ? part : (part.text ?? "")))
    .join("");
}

function ToolCall({ call, result, state }) {
  return (
    <div className="tool-call" data-testid="tool-call" data-state={state}>
      <div className="tool-name">
        tool {call.name}({JSON.stringify(call.args)})
      </div>
      <div className="tool-result" data-testid="tool-result">
        {result ? text(result.content) : state === "pending" ? "waiting…" : ""}
      </div>
    </div>
  );
}

function Message({ message, stream }) {
  if (message.type === "tool") return null; // shown with its call
  const calls = message.type === "ai" ? stream.getToolCalls(message) : [];
  return (
    <div className={`message ${message.type}`} data-testid={`message-${message.type}`}>
      <div className="role">{message.type === "human" ? "you" : "assistant"}</div>
      <div className="content" data-testid="content">
        {text(message.content)}
      </div>
      {calls.map(({ id, call, result, state }) => (
        <ToolCall key={id ?? call.id} call={call} result={result} state={state} />
      ))}
    </div>
  );
}

function Approval({ interrupt, onAnswer }) {
  const value = interrupt.value ?? {};
  return (
    <div className="interrupt" data-testid="interrupt">
      <div className="question">{value.question ?? JSON.stringify(value)}</div>
      <button data-testid="approve" onClick={() => onAnswer(true)}>
        Approve
      </button>
      <button data-testid="deny" onClick={() => onAnswer(false)}>
        Deny
      </button>
    </div>
  );
}

export default function App() {
  const [threadId, setThreadId] = useState(params.get("thread"));
  const [draft, setDraft] = useState("");
  const stream = useStream({
    apiUrl,
    assistantId,
    messagesKey: "messages",
    threadId,
    onThreadId: setThreadId,
  });

  const send = (event) => {
    event.preventDefault();
    const content = draft.trim();
    if (!content) return;
    setDraft("");
    stream.submit(
      { messages: [{ type: "human", content }] },
      {
        optimisticValues: (prev) => ({
          ...prev,
          messages: [...(prev.messages ?? []), { type: "human", content }],
        }),
      },
    );
  };
  const answer = (approved) =>
    stream.submit(undefined, { command: { resume: { approved } } });
  const pending = !stream.isLoading && stream.interrupt?.value ? stream.interrupt : null;

  return (
    <main>
      <header>
        <h1>stategraph chat</h1>
        <span data-testid="thread-id">{threadId ?? ""}</span>
        <span data-testid="status">{stream.isLoading ? "streaming" : "idle"}</span>
      </header>
      <section className="messages" data-testid="messages">
        {stream.messages.map((message, index) => (
          <Message key={message.id ?? index} message={message} stream={stream} />
        ))}
      </section>
      {pending && <Approval interrupt={pending} onAnswer={answer} />}
      {stream.error && (
        <div className="error" data-testid="error">
          {String(stream.error?.message ?? stream.error)}
        </div>
      )}
      <form onSubmit={send}>
        <input
          data-testid="input"
          value={draft}
          placeholder="Ask about the weather in a city…"
          onChange={(event) => setDraft(event.target.value)}
          disabled={stream.isLoading || pending != null}
        />
        <button data-testid="send" type="submit" disabled={stream.isLoading || pending != null}>
          Send
        </button>
      </form>
    </main>
  );
}
