// Shared by the SDK scripts: the environment node_test.go sets, and the
// loop that runs the scenarios and prints what the SDK returned or raised
// as one JSON object on stdout.

export const env = {
  // The proxy's base URL (http://127.0.0.1:PORT), as the harness is given it.
  url: must('PROMPTLOOM_PROXY_URL'),
  // The credential the SDK sends; the test checks it never reaches the
  // transcript.
  key: must('PROMPTLOOM_API_KEY'),
  // The scenarios to run, comma-separated, in order ("" or unset: all).
  scenarios: process.env.PROMPTLOOM_SCENARIO ?? '',
};

// The prompt the proxy holds every call to, and a stale one it refuses.
export const system = 'You are terse.';
export const staleSystem = 'You are verbose.';

function must(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

// describe is what a test needs of an error: the SDK's class, the HTTP
// status, the error type the SDK parsed from the body, and the message.
export function describe(e) {
  return {
    class: e?.constructor?.name ?? typeof e,
    status: e?.status ?? null,
    type: e?.type ?? e?.error?.error?.type ?? e?.error?.type ?? null,
    message: String(e?.message ?? e),
  };
}

// run runs the scenarios named by PROMPTLOOM_SCENARIO (all, in order, by
// default) and prints {name: result}; a scenario that throws is
// {name: {thrown: describe(e)}}, and the others still run.
export async function run(scenarios) {
  const names = env.scenarios ? env.scenarios.split(',') : Object.keys(scenarios);
  const out = {};
  for (const name of names) {
    const fn = scenarios[name];
    if (!fn) {
      out[name] = { thrown: { class: 'Error', message: `no scenario ${name}` } };
      continue;
    }
    try {
      out[name] = await fn();
    } catch (e) {
      out[name] = { thrown: describe(e) };
    }
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}
