// ralph-gate for OpenCode (https://opencode.ai), which has plugins instead of command hooks.
//
// After each edit it runs the edit gates for the files the tool wrote and appends their errors
// to the tool's output, which the model reads next. When the session goes idle it asks
// `ralph-gate hook stop --agent opencode` whether a loop of this session may end; if not, the
// refusal is sent back as the next prompt, so the loop goes on. The binary decides everything;
// this file only carries facts to it and answers back.
//
// Install: copy this file to .opencode/plugins/ (or ~/.config/opencode/plugins/), put
// `ralph-gate` on PATH, and start a loop with `ralph-gate loop start --agent opencode ...`.

const EDIT_TOOLS = new Set(["write", "edit", "multiedit", "patch", "apply_patch"]);

function run(directory, event, payload) {
  const proc = Bun.spawnSync(["ralph-gate", "hook", event, "--agent", "opencode"], {
    cwd: directory,
    stdin: new TextEncoder().encode(JSON.stringify(payload)),
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = new TextDecoder().decode(proc.stdout).trim();
  if (proc.exitCode !== 0) {
    // Exit 2: the stop could not be checked, so the loop goes on with the reason.
    const err = new TextDecoder().decode(proc.stderr).trim();
    return proc.exitCode === 2 ? { decision: "block", reason: err } : null;
  }
  return out ? JSON.parse(out) : null;
}

// The files an edit tool wrote: its path argument, or the files named in a patch.
function written(tool, args) {
  const path = args?.filePath ?? args?.file_path ?? args?.path;
  if (path) return [path];
  const patch = args?.patchText ?? args?.patch ?? args?.input;
  if (typeof patch !== "string") return [];
  const files = [];
  for (const line of patch.split("\n")) {
    const m = line.match(/^\*\*\* (?:Add File|Update File|Move to): (.+)$/);
    if (m) files.push(m[1].trim());
  }
  return files;
}

export const RalphGate = async ({ client, directory }) => {
  // The replies as they stream in (message id -> role, and -> text of each part), so the
  // stop is judged the moment the session goes idle, before `opencode run` exits.
  const roles = new Map();
  const texts = new Map();
  // The last reply judged per session: OpenCode can report one idle more than once, and one
  // reply must count as one stop.
  const judged = new Map();
  const lastReply = (sessionID) => {
    let last = null;
    for (const [id, info] of roles) {
      if (info.sessionID === sessionID && info.role === "assistant") last = id;
    }
    if (!last) return null;
    const parts = texts.get(last) ?? new Map();
    return { id: last, text: [...parts.values()].join("\n") };
  };
  return {
    "tool.execute.after": async (input, output) => {
      if (!EDIT_TOOLS.has(input.tool)) return;
      for (const file of written(input.tool, input.args)) {
        const answer = run(directory, "post-tool-use", {
          session_id: input.sessionID,
          cwd: directory,
          hook_event_name: "PostToolUse",
          tool_name: "Write",
          tool_input: { file_path: file },
        });
        const context = answer?.hookSpecificOutput?.additionalContext;
        if (context) output.output = `${output.output ?? ""}\n\n${context}`;
      }
    },
    event: async ({ event }) => {
      if (event.type === "message.updated") {
        const info = event.properties.info;
        roles.set(info.id, { role: info.role, sessionID: info.sessionID });
        return;
      }
      if (event.type === "message.part.updated") {
        const part = event.properties.part;
        if (part.type !== "text" || part.synthetic) return;
        if (!texts.has(part.messageID)) texts.set(part.messageID, new Map());
        texts.get(part.messageID).set(part.id, part.text);
        return;
      }
      if (event.type !== "session.idle") return;
      const sessionID = event.properties.sessionID;
      const reply = lastReply(sessionID);
      if (!reply || judged.get(sessionID) === reply.id) return;
      judged.set(sessionID, reply.id);
      const answer = run(directory, "stop", {
        session_id: sessionID,
        cwd: directory,
        hook_event_name: "Stop",
        stop_hook_active: false,
        last_assistant_message: reply.text,
      });
      if (answer?.decision === "block" && answer.reason) {
        await client.session.prompt({
          path: { id: sessionID },
          body: { parts: [{ type: "text", text: answer.reason }] },
        });
      }
    },
  };
};
