// The reference for ptree.providers: runs @earendil-works/pi-ai offline.
//
// Reads cases from stdin, one JSON object a line, and answers each with one line of JSON on
// stdout, so a test run starts Node once.  A case is either
//   {kind: "payload", api, provider, model, reasoning, images, system, tools, messages}
//     -> {body}: the JSON body pi-ai's stream function sends (caught by a stub fetch), or
//        {error} when pi-ai fails before sending;
//   {kind: "stringify", value} -> {text}: JSON.stringify(value);
//   {kind: "hash", text} -> {hash}: pi-ai's shortHash(text);
//   {kind: "response", api, provider, model, response}
//     -> {message}: the assistant message pi-ai builds when the non-streaming `response`
//        arrives as the equivalent server-sent event stream.
// No network: every request goes to the stub fetch.
import readline from "node:readline";
import { pathToFileURL } from "node:url";
import path from "node:path";

const root = path.resolve(process.argv[2]);
const base = path.join(root, "node_modules", "@earendil-works", "pi-ai");
const load = (name) => import(pathToFileURL(path.join(base, "dist", "api", `${name}.js`)).href);
const modules = {
    "openai-completions": await load("openai-completions"),
    "openai-responses": await load("openai-responses"),
    "anthropic-messages": await load("anthropic-messages"),
    "google-generative-ai": await load("google-generative-ai"),
};
const { shortHash } = await import(pathToFileURL(path.join(base, "dist", "utils", "hash.js")).href);
const { normalizeContext } = await import(pathToFileURL(path.join(base, "dist", "utils", "transcript.js")).href);

function model(c) {
    return {
        id: c.model,
        name: c.model,
        api: c.api,
        provider: c.provider,
        baseUrl: "https://reference.invalid/v1",
        reasoning: !!c.reasoning,
        input: c.images === false ? ["text"] : ["text", "image"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 100000,
        maxTokens: 4096,
    };
}

function sse(events, named) {
    let text = "";
    for (const e of events) {
        if (named) text += `event: ${e.type}\n`;
        text += `data: ${JSON.stringify(e)}\n\n`;
    }
    return text;
}

// The stream a server sends for a non-streaming response body, event by event.
function streamFor(api, r) {
    if (api === "openai-completions") {
        const chunks = [];
        // pi-ai asks for one choice; a stream of several would interleave them
        for (const choice of (r.choices ?? []).slice(0, 1)) {
            const m = choice.message ?? {};
            const delta = {};
            for (const k of ["role", "content", "reasoning_content", "reasoning", "reasoning_text",
                "reasoning_details", "refusal"]) if (m[k] !== undefined) delta[k] = m[k];
            if (m.tool_calls) delta.tool_calls = m.tool_calls.map((tc, index) => ({ index, ...tc }));
            chunks.push({ id: r.id, object: "chat.completion.chunk", created: r.created, model: r.model,
                choices: [{ index: choice.index ?? 0, delta, finish_reason: null }] });
            chunks.push({ id: r.id, object: "chat.completion.chunk", created: r.created, model: r.model,
                choices: [{ index: choice.index ?? 0, delta: {}, finish_reason: choice.finish_reason }] });
        }
        if (r.usage) chunks.push({ id: r.id, object: "chat.completion.chunk", created: r.created,
            model: r.model, choices: [], usage: r.usage });
        return sse(chunks, false) + "data: [DONE]\n\n";
    }
    if (api === "openai-responses") {
        const events = [{ type: "response.created", response: { ...r, output: [], status: "in_progress" } }];
        (r.output ?? []).forEach((item, i) => {
            events.push({ type: "response.output_item.added", output_index: i, item });
            events.push({ type: "response.output_item.done", output_index: i, item });
        });
        const terminal = r.status === "incomplete" ? "response.incomplete"
            : r.status === "failed" ? "response.failed" : "response.completed";
        events.push({ type: terminal, response: r });
        return sse(events, true);
    }
    if (api === "anthropic-messages") {
        const events = [{ type: "message_start", message: { ...r, content: [], stop_reason: null,
            usage: { ...r.usage } } }];
        (r.content ?? []).forEach((block, index) => {
            if (block.type === "tool_use") {
                events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
                events.push({ type: "content_block_delta", index,
                    delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
            } else if (block.type === "thinking") {
                events.push({ type: "content_block_start", index,
                    content_block: { type: "thinking", thinking: "", signature: "" } });
                events.push({ type: "content_block_delta", index,
                    delta: { type: "thinking_delta", thinking: block.thinking } });
                events.push({ type: "content_block_delta", index,
                    delta: { type: "signature_delta", signature: block.signature } });
            } else if (block.type === "text") {
                events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
                events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
            } else {
                events.push({ type: "content_block_start", index, content_block: block });
            }
            events.push({ type: "content_block_stop", index });
        });
        events.push({ type: "message_delta", delta: { stop_reason: r.stop_reason,
            stop_sequence: r.stop_sequence ?? null, ...(r.stop_details ? { stop_details: r.stop_details } : {}) },
            usage: r.usage });
        events.push({ type: "message_stop" });
        return sse(events, true);
    }
    return sse([r], false);
}

async function run(c) {
    if (c.kind === "stringify") return { text: JSON.stringify(c.value) };
    if (c.kind === "hash") return { hash: shortHash(c.text) };
    const m = model(c);
    const mod = modules[c.api];
    if (!mod) return { error: `unknown api ${c.api}` };
    let body;
    const fetch = async (url, init) => {
        if (body === undefined) body = JSON.parse(init.body);
        if (c.kind === "payload") {
            return new Response(JSON.stringify({ error: { type: "invalid_request_error", message: "stub" } }),
                { status: 400, headers: { "content-type": "application/json" } });
        }
        return new Response(streamFor(c.api, c.response), {
            status: 200, headers: { "content-type": "text/event-stream" } });
    };
    const context = { systemPrompt: c.system ?? undefined, tools: c.tools?.length ? c.tools : undefined,
        messages: c.messages ?? [{ role: "user", content: "Hi", timestamp: 0 }] };
    const s = mod.stream(m, normalizeContext(context), { apiKey: "sk-test", fetch, maxRetries: 0 });
    const message = await s.result();
    if (c.kind === "payload") {
        return body === undefined ? { error: message.errorMessage ?? "no request" } : { body };
    }
    delete message.durationMs; // when the stream ended: no counterpart in a reply body
    return { message };
}

// One case per line in, one result per line out, so a test session keeps one Node
// process and asks it as it goes (Hypothesis examples one by one, or a whole batch).
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
    if (!line.trim()) continue;
    let result;
    try {
        result = await run(JSON.parse(line));
    } catch (e) {
        result = { error: String((e && e.stack) || e) };
    }
    process.stdout.write(JSON.stringify(result) + "\n");
}
