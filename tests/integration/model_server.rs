//! A scripted model API on 127.0.0.1 for driving real agent CLIs offline: Anthropic's
//! Messages API (Claude Code) or OpenAI's Responses API (Codex, Copilot). Each POST is
//! recorded; `script` turns the request body into the model's reply, which is sent as
//! server-sent events when the client asks for a stream and as one JSON message if not.
//! Every connection is answered once and closed, so no client pooling can stall it.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One content block of a reply.
pub enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        input: Value,
    },
    /// A Responses API free-form tool call (Codex's `apply_patch`): `input` is raw text.
    Custom {
        id: String,
        name: String,
        input: String,
    },
}

/// Which provider API the server speaks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Messages,
    Responses,
    /// OpenAI's Chat Completions (OpenCode through `@ai-sdk/openai-compatible`, Qwen Code).
    Chat,
    /// Google's Gemini API (`generateContent`, `streamGenerateContent?alt=sse`).
    Gemini,
}

pub struct Reply {
    pub blocks: Vec<Block>,
}

impl Reply {
    pub fn text(t: &str) -> Self {
        Self {
            blocks: vec![Block::Text(t.into())],
        }
    }

    pub fn tool(id: &str, name: &str, input: Value) -> Self {
        Self {
            blocks: vec![Block::Tool {
                id: id.into(),
                name: name.into(),
                input,
            }],
        }
    }

    pub fn custom(id: &str, name: &str, input: &str) -> Self {
        Self {
            blocks: vec![Block::Custom {
                id: id.into(),
                name: name.into(),
                input: input.into(),
            }],
        }
    }
}

type Script = dyn Fn(&Value) -> Reply + Send + Sync;

pub struct ModelServer {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

impl ModelServer {
    pub fn start(script: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_wire(Wire::Messages, script)
    }

    pub fn start_wire(
        wire: Wire,
        script: impl Fn(&Value) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, script) = (seen.clone(), script.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, wire, &seen, &*script);
                });
            }
        });
        Self { port, requests }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The recorded request bodies of the main agent (those that offer tools).
    pub fn agent_requests(&self) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| {
                r.get("tools")
                    .is_some_and(|t| t.as_array().is_some_and(|a| !a.is_empty()))
            })
            .cloned()
            .collect()
    }
}

fn serve(
    stream: TcpStream,
    wire: Wire,
    seen: &Mutex<Vec<Value>>,
    script: &Script,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or_default().to_string();
    let target = words.next().unwrap_or_default().to_string();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    let mut out = stream;
    if method != "POST" {
        return out.write_all(
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if wire == Wire::Gemini && target.contains(":countTokens") {
        let body = r#"{"totalTokens":10}"#;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        out.write_all(head.as_bytes())?;
        return out.write_all(body.as_bytes());
    }
    let n = {
        let mut s = seen.lock().unwrap();
        s.push(request.clone());
        s.len()
    };
    let reply = script(&request);
    let stop = if reply.blocks.iter().any(|b| !matches!(b, Block::Text(_))) {
        "tool_use"
    } else {
        "end_turn"
    };
    let (kind, payload) = match (wire, request["stream"] == true) {
        (Wire::Messages, true) => ("text/event-stream", events(&reply, stop, n)),
        (Wire::Messages, false) => ("application/json", message(&reply, stop, n).to_string()),
        (Wire::Responses, true) => ("text/event-stream", response_events(&reply, n)),
        (Wire::Responses, false) => ("application/json", response(&reply, n).to_string()),
        (Wire::Chat, true) => ("text/event-stream", chat_events(&reply)),
        (Wire::Chat, false) => ("application/json", chat(&reply).to_string()),
        (Wire::Gemini, _) if target.contains(":streamGenerateContent") => (
            "text/event-stream",
            format!("data: {}\r\n\r\n", gemini(&reply)),
        ),
        (Wire::Gemini, _) => ("application/json", gemini(&reply).to_string()),
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        payload.len()
    );
    out.write_all(head.as_bytes())?;
    out.write_all(payload.as_bytes())?;
    out.flush()
}

fn content(reply: &Reply) -> Vec<Value> {
    reply
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => json!({"type": "text", "text": t}),
            Block::Tool { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            Block::Custom { id, name, input } => {
                json!({"type": "tool_use", "id": id, "name": name, "input": {"input": input}})
            }
        })
        .collect()
}

/// The Responses API's output items for a reply.
fn items(reply: &Reply, n: usize) -> Vec<Value> {
    reply
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| match b {
            Block::Text(t) => json!({"type": "message", "role": "assistant", "id": format!("msg_{n}_{i}"),
                "status": "completed", "content": [{"type": "output_text", "text": t, "annotations": []}]}),
            Block::Tool { id, name, input } => json!({"type": "function_call", "id": format!("fc_{n}_{i}"),
                "status": "completed", "call_id": id, "name": name, "arguments": input.to_string()}),
            Block::Custom { id, name, input } => json!({"type": "custom_tool_call", "id": format!("ct_{n}_{i}"),
                "status": "completed", "call_id": id, "name": name, "input": input}),
        })
        .collect()
}

fn response(reply: &Reply, n: usize) -> Value {
    json!({"id": format!("resp_{n}"), "object": "response", "status": "completed", "model": "gpt-5.5",
           "output": items(reply, n),
           "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                     "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}})
}

fn response_events(reply: &Reply, n: usize) -> String {
    let mut out = String::new();
    let mut ev = |data: Value| {
        out.push_str(&format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap_or("")
        ));
    };
    let mut started = response(reply, n);
    started["status"] = json!("in_progress");
    started["output"] = json!([]);
    ev(json!({"type": "response.created", "response": started.clone()}));
    ev(json!({"type": "response.in_progress", "response": started}));
    for (i, item) in items(reply, n).into_iter().enumerate() {
        let mut added = item.clone();
        if added["type"] == "message" {
            added["content"] = json!([]);
        }
        ev(json!({"type": "response.output_item.added", "output_index": i, "item": added}));
        if item["type"] == "message" {
            let text = item["content"][0]["text"].clone();
            ev(
                json!({"type": "response.output_text.delta", "item_id": item["id"], "output_index": i,
                      "content_index": 0, "delta": text}),
            );
        }
        ev(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    ev(json!({"type": "response.completed", "response": response(reply, n)}));
    out
}

fn message(reply: &Reply, stop: &str, n: usize) -> Value {
    json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant",
           "model": "claude-sonnet-4-5", "content": content(reply), "stop_reason": stop,
           "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 5}})
}

fn events(reply: &Reply, stop: &str, n: usize) -> String {
    let mut out = String::new();
    let mut ev = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    let mut start = message(reply, stop, n);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    ev(
        "message_start",
        json!({"type": "message_start", "message": start}),
    );
    for (i, b) in reply.blocks.iter().enumerate() {
        let (block, delta) = match b {
            Block::Text(t) => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": t}),
            ),
            Block::Tool { id, name, input } => (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            ),
            Block::Custom { id, name, input } => (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": json!({"input": input}).to_string()}),
            ),
        };
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": block}),
        );
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": delta}),
        );
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        );
    }
    ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    out
}

/// Chat Completions: the reply's text, and its tool calls as function calls.
fn chat_parts(reply: &Reply) -> (String, Vec<Value>) {
    let mut text = String::new();
    let mut calls = Vec::new();
    for b in &reply.blocks {
        match b {
            Block::Text(t) => text.push_str(t),
            Block::Tool { id, name, input } => calls.push(json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": input.to_string()}})),
            Block::Custom { id, name, input } => calls.push(json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": json!({"input": input}).to_string()}})),
        }
    }
    (text, calls)
}

fn chat(reply: &Reply) -> Value {
    let (text, calls) = chat_parts(reply);
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    json!({"id": "chat", "object": "chat.completion", "created": 1, "model": "scripted",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}

fn chat_events(reply: &Reply) -> String {
    let (text, calls) = chat_parts(reply);
    let chunk = |choices: Value| json!({"id": "chat", "object": "chat.completion.chunk", "created": 1, "model": "scripted", "choices": choices});
    let mut out = Vec::new();
    if !text.is_empty() {
        out.push(chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}])));
    }
    for (i, c) in calls.iter().enumerate() {
        let mut call = c.clone();
        call["index"] = json!(i);
        out.push(chunk(json!([{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": null}])));
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
    ));
    let mut usage = chunk(json!([]));
    usage["usage"] = json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
    out.push(usage);
    out.iter()
        .map(|c| format!("data: {c}\n\n"))
        .collect::<String>()
        + "data: [DONE]\n\n"
}

/// A Gemini API response: text parts and function calls.
fn gemini(reply: &Reply) -> Value {
    let parts: Vec<Value> = reply
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => json!({"text": t}),
            Block::Tool { id, name, input } => {
                json!({"functionCall": {"id": id, "name": name, "args": input}})
            }
            Block::Custom { id, name, input } => {
                json!({"functionCall": {"id": id, "name": name, "args": {"input": input}}})
            }
        })
        .collect();
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}})
}
