// The official OpenAI TypeScript SDK (Chat Completions) through the
// proxy: two turns with a tool call, a stream, a retry after a 429, a
// refused stale prompt. Prints what the SDK returned, as JSON.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: process.env.API_KEY, maxRetries: 2 });
const call = (name) => ({ headers: { 'Promptloom-Call': name, 'Promptloom-Session': 'openai' } });
const tools = [{ type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
const base = { model: 'gpt-4o', tools };
const system = { role: 'system', content: 'You are terse.' };
const out = {};

const messages = [system, { role: 'user', content: 'Where is main?' }];
const r1 = await client.chat.completions.create({ ...base, messages }, call('turn-1'));
const tc = r1.choices[0].message.tool_calls[0];
out.tool = { name: tc.function.name, input: JSON.parse(tc.function.arguments) };
messages.push(r1.choices[0].message);
messages.push({ role: 'tool', tool_call_id: tc.id, content: 'package main' });
const r2 = await client.chat.completions.create({ ...base, messages }, call('turn-2'));
out.turn2 = r2.choices[0].message.content;

const stream = await client.chat.completions.create({ ...base, stream: true, messages: [system, { role: 'user', content: 'Stream it.' }] }, call('stream'));
let text = '';
for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
out.stream = text;

const r3 = await client.chat.completions.create({ ...base, messages: [system, { role: 'user', content: 'Again.' }] }, call('retry'));
out.retry = r3.choices[0].message.content;

try {
  await client.chat.completions.create({ ...base, messages: [{ role: 'system', content: 'You are verbose.' }, { role: 'user', content: 'hi' }] }, call('stale'));
  out.stale = 'sent';
} catch (e) {
  out.stale = { status: e.status, type: e.error?.type, error: e.constructor.name, message: e.message };
}
console.log(JSON.stringify(out));
