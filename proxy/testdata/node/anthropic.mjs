// The official Anthropic TypeScript SDK through the proxy: two turns with
// a tool call, a stream, a retry after a 429, a refused stale prompt.
// Prints what the SDK returned, as JSON.
import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY, maxRetries: 2 });
const call = (name) => ({ headers: { 'Promptloom-Call': name, 'Promptloom-Session': 'anthropic' } });
const tools = [{ name: 'read_file', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];
const base = { model: 'claude-sonnet-4-5', max_tokens: 100, system: 'You are terse.', tools };
const out = {};

const messages = [{ role: 'user', content: 'Where is main?' }];
const r1 = await client.messages.create({ ...base, messages }, call('turn-1'));
const use = r1.content.find((b) => b.type === 'tool_use');
out.tool = { name: use.name, input: use.input };
messages.push({ role: 'assistant', content: r1.content });
messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'package main' }] });
const r2 = await client.messages.create({ ...base, messages }, call('turn-2'));
out.turn2 = r2.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

const stream = client.messages.stream({ ...base, messages: [{ role: 'user', content: 'Stream it.' }] }, call('stream'));
out.stream = (await stream.finalMessage()).content.filter((b) => b.type === 'text').map((b) => b.text).join('');

const r3 = await client.messages.create({ ...base, messages: [{ role: 'user', content: 'Again.' }] }, call('retry'));
out.retry = r3.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

try {
  await client.messages.create({ ...base, system: 'You are verbose.', messages: [{ role: 'user', content: 'hi' }] }, call('stale'));
  out.stale = 'sent';
} catch (e) {
  out.stale = { status: e.status, type: e.error?.error?.type, error: e.constructor.name, message: e.message };
}
console.log(JSON.stringify(out));
