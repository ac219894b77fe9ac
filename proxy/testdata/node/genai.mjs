// The official Google Gen AI TypeScript SDK through the proxy: two turns
// with a function call, a stream, a retry after a 429 (genai retries
// only when asked: retryOptions), a refused stale prompt. Prints what the
// SDK returned, as JSON.
import { GoogleGenAI } from '@google/genai';

const ai = new GoogleGenAI({ apiKey: process.env.API_KEY, httpOptions: { baseUrl: process.env.BASE_URL } });
const headers = (name) => ({ 'Promptloom-Call': name, 'Promptloom-Session': 'gemini' });
const tools = [{ functionDeclarations: [{ name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } }] }];
const config = (name, extra = {}) => ({ systemInstruction: 'You are terse.', tools, httpOptions: { headers: headers(name) }, ...extra });
const model = 'gemini-2.5-flash';
const out = {};

const contents = [{ role: 'user', parts: [{ text: 'Where is main?' }] }];
const r1 = await ai.models.generateContent({ model, contents, config: config('turn-1') });
const fc = r1.functionCalls[0];
out.tool = { name: fc.name, input: fc.args };
contents.push(r1.candidates[0].content);
contents.push({ role: 'user', parts: [{ functionResponse: { name: fc.name, response: { content: 'package main' } } }] });
const r2 = await ai.models.generateContent({ model, contents, config: config('turn-2') });
out.turn2 = r2.text;

let text = '';
for await (const chunk of await ai.models.generateContentStream({ model, contents: 'Stream it.', config: config('stream') })) text += chunk.text ?? '';
out.stream = text;

const r3 = await ai.models.generateContent({ model, contents: 'Again.',
  config: config('retry', { httpOptions: { headers: headers('retry'), retryOptions: { attempts: 2 } } }) });
out.retry = r3.text;

try {
  await ai.models.generateContent({ model, contents: 'hi', config: { ...config('stale'), systemInstruction: 'You are verbose.' } });
  out.stale = 'sent';
} catch (e) {
  out.stale = { status: e.status, error: e.constructor.name, message: e.message };
}
console.log(JSON.stringify(out));
