// Opens a session file with Pi's own SessionManager and prints, as JSON, the context Pi
// builds and the input items Pi's OpenAI Responses provider would send for it (the
// request body's "input", without a system prompt).  Nothing is sent anywhere.
// Used by tests/test_integrations_pi.py.
//
//   node pi_responses_input.mjs <pi-coding-agent package dir> <file> <model id>
// (Pi 0.73.1's package or Pi 1.6's: the pi-ai beside it converts.)
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, file, modelId] = process.argv.slice(2);
const load = (dir, path) => import(pathToFileURL(join(dir, "dist", ...path)).href);
const { SessionManager } = await load(pkgDir, ["core", "session-manager.js"]);
const { convertToLlm } = await load(pkgDir, ["core", "messages.js"]);
const piAi = join(dirname(pkgDir), "pi-ai");
// pi-ai 0.73.1 keeps it under providers/, 1.6 under api/
const { convertResponsesMessages } = await load(piAi, ["providers", "openai-responses-shared.js"])
  .catch(() => load(piAi, ["api", "openai-responses-shared.js"]));

const context = SessionManager.open(file).buildSessionContext();
const model = {
  id: modelId,
  provider: "openai",
  api: "openai-responses",
  input: ["text", "image"],
  reasoning: false,
};
const input = convertResponsesMessages(
  model,
  { messages: convertToLlm(context.messages) },
  new Set(["openai"]),
  { includeSystemPrompt: false },
);
process.stdout.write(JSON.stringify({ context, input }));
