// The official Google Gen AI TypeScript SDK through the proxy:
// httpOptions.baseUrl is the proxy, Promptloom-Call is a per-request
// header (config.httpOptions.headers). The SDK does not retry by default:
// the retry scenario asks it to (httpOptions.retryOptions), with its
// default status codes (429 among them).
import { GoogleGenAI, ApiError } from '@google/genai';
import { env, system, staleSystem, describe, run } from './common.mjs';

const ai = new GoogleGenAI({ apiKey: env.key, httpOptions: { baseUrl: env.url } });
const model = 'gemini-2.5-flash';
const headers = (name) => ({ headers: { 'Promptloom-Call': name } });
const tools = [{
  functionDeclarations: [{
    name: 'read_file',
    description: 'Read a file of the repository.',
    parameters: { type: 'OBJECT', properties: { path: { type: 'STRING' } }, required: ['path'] },
  }],
}];
const user = (text) => [{ role: 'user', parts: [{ text }] }];

await run({
  // Two turns: the model asks for a function, the harness answers it.
  async turns() {
    const contents = user('What is in main.go?');
    const first = await ai.models.generateContent({
      model, contents, config: { systemInstruction: system, tools, httpOptions: headers('turn-1') },
    });
    const fc = first.functionCalls[0];
    contents.push(first.candidates[0].content);
    contents.push({ role: 'user', parts: [{ functionResponse: { id: fc.id, name: fc.name, response: { content: 'package main' } } }] });
    const second = await ai.models.generateContent({
      model, contents, config: { systemInstruction: system, tools, httpOptions: headers('turn-2') },
    });
    return {
      first: { text: first.text ?? null, stop: first.candidates[0].finishReason, tool: { id: fc.id, name: fc.name, input: fc.args } },
      second: { text: second.text, stop: second.candidates[0].finishReason },
    };
  },
  // A stream (streamGenerateContent?alt=sse), its chunks' text joined.
  async stream() {
    const s = await ai.models.generateContentStream({
      model, contents: user('Say something long.'), config: { systemInstruction: system, httpOptions: headers('stream') },
    });
    let text = '', deltas = 0, output_tokens = null, stop = null;
    for await (const chunk of s) {
      text += chunk.text ?? '';
      deltas++;
      stop = chunk.candidates?.[0]?.finishReason ?? stop;
      output_tokens = chunk.usageMetadata?.candidatesTokenCount ?? output_tokens;
    }
    return { text, deltas, stop, output_tokens };
  },
  // The upstream answers 429 then 200: the SDK, asked to, retries.
  async retry() {
    const r = await ai.models.generateContent({
      model, contents: user('Are you there?'), config: {
        systemInstruction: system,
        httpOptions: { ...headers('retry'), retryOptions: { attempts: 3, initialDelay: 0.01, maxDelay: 0.05 } },
      },
    });
    return { text: r.text };
  },
  // A stale system prompt: the proxy refuses it, in Gemini's error shape,
  // and the SDK (asked to retry) does not retry a 400.
  async stale() {
    try {
      await ai.models.generateContent({
        model, contents: user('hi'), config: {
          systemInstruction: staleSystem,
          httpOptions: { ...headers('stale'), retryOptions: { attempts: 3, initialDelay: 0.01, maxDelay: 0.05 } },
        },
      });
      return { error: null };
    } catch (e) {
      let body = null;
      try { body = JSON.parse(e.message); } catch {}
      return { error: { ...describe(e), grpc: body?.error?.status ?? null }, badRequest: e instanceof ApiError && e.status === 400 };
    }
  },
});
