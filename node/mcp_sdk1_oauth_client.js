// @modelcontextprotocol/sdk 1.32.2's own OAuth client (its auth provider
// interface, with tokens kept in memory) against a jrpc MCP server
// protected by serve_http's `auth` (examples/mcp/oauth_server.lua). The
// "browser" is a fetch that does not follow redirects: the test
// authorization server (node/oauth_test_as.js) approves at once and
// redirects back with the code, which goes to finishAuth. Prints one JSON
// line per step for spec/mcp_oauth_spec.lua to compare exactly.
//   node node/mcp_sdk1_oauth_client.js http://127.0.0.1:PORT/mcp
'use strict';
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { UnauthorizedError } = require('@modelcontextprotocol/sdk/client/auth.js');

const url = new URL(process.argv[2]);
const REDIRECT = 'http://127.0.0.1:9/callback';  // never listened on: the code is read from the Location
const step = (name, value) => process.stdout.write(JSON.stringify({ step: name, ...value }) + '\n');

let code;
const store = {};
const provider = {
  get redirectUrl() { return REDIRECT; },
  get clientMetadata() {
    return { client_name: 'sdk1-oauth-client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' };
  },
  clientInformation: () => store.client,
  saveClientInformation: (info) => { store.client = info; },
  tokens: () => store.tokens,
  saveTokens: (tokens) => { store.tokens = tokens; },
  saveCodeVerifier: (v) => { store.verifier = v; },
  codeVerifier: () => store.verifier,
  async redirectToAuthorization(authorizationUrl) {
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    const back = new URL(res.headers.get('location'));
    code = back.searchParams.get('code');
    step('authorization', { status: res.status, scope: authorizationUrl.searchParams.get('scope'),
      resource: authorizationUrl.searchParams.get('resource'), iss: back.searchParams.get('iss') !== null });
  },
};

async function connect(client) {
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  try {
    await client.connect(transport);
    return transport;
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
    step('unauthorized', {});
    await transport.finishAuth(code);
    const again = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await client.connect(again);
    return again;
  }
}

async function main() {
  const client = new Client({ name: 'sdk1-oauth-client', version: '1.0.0' });
  await connect(client);
  step('connected', { token_type: store.tokens.token_type, has_refresh: typeof store.tokens.refresh_token === 'string' });
  step('tools/list', { names: (await client.listTools()).tools.map((t) => t.name) });
  step('tools/call whoami', { result: await client.callTool({ name: 'whoami', arguments: {} }) });
  try {
    await client.callTool({ name: 'admin_report', arguments: {} });
    step('tools/call admin_report', { refused: false });
  } catch (e) {
    step('tools/call admin_report', { refused: true, message: String(e.message).slice(0, 80) });
  }
  await client.close();
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
