// A small OAuth 2.1 authorization server for the specs, on 127.0.0.1 only
// (node's http module, no framework): RFC 8414 metadata, RFC 7591
// registration, an authorization endpoint that approves at once (it
// redirects back with a code, the state and RFC 9207 iss: no person
// needed), a token endpoint (authorization_code with PKCE S256 checked,
// refresh_token; clients authenticated as they registered: none,
// client_secret_basic, client_secret_post) and RFC 7662 introspection,
// which the protected jrpc servers of the specs call from their verify hook.
//   node node/oauth_test_as.js [--scopes "a b"] [--expires-in S]
// Prints (on stderr) "listening http://127.0.0.1:PORT", then one line per event
// ("register none", "authorize scope=... resource=...", "token
// authorization_code", "refresh", "introspect active|inactive", or
// "refused WHY") for the specs to compare.
'use strict';
const http = require('http');
const crypto = require('crypto');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const SCOPES = opt('--scopes', 'mcp:read mcp:admin offline_access').split(' ');
const EXPIRES_IN = Number(opt('--expires-in', '3600'));

let issuer = '';
const clients = new Map();  // client_id -> { secret, method, redirect_uris }
const codes = new Map();    // code -> { client_id, redirect_uri, challenge, scope, resource }
const tokens = new Map();   // access token -> { client_id, scope, resource, exp }
const refreshes = new Map();  // refresh token -> { client_id, scope, resource }

const log = (line) => process.stderr.write(line + '\n');
const random = () => crypto.randomBytes(24).toString('base64url');
const s256 = (v) => crypto.createHash('sha256').update(v).digest('base64url');

function json(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

function refuse(res, status, error, why) {
  log('refused ' + why);
  json(res, status, { error, error_description: why });
}

function body(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

// The client a token request comes from, authenticated as it registered.
function authenticate(req, form) {
  const basic = /^Basic (.+)$/.exec(req.headers.authorization || '');
  let id = form.client_id, secret = form.client_secret, method = secret ? 'client_secret_post' : 'none';
  if (basic) {
    const pair = Buffer.from(basic[1], 'base64').toString('utf8');
    const at = pair.indexOf(':');
    id = decodeURIComponent(pair.slice(0, at));
    secret = decodeURIComponent(pair.slice(at + 1));
    method = 'client_secret_basic';
  }
  const client = clients.get(id);
  if (!client || client.method !== method || (method !== 'none' && client.secret !== secret)) return null;
  return id;
}

function issue(res, client_id, scope, resource) {
  const access = random(), refresh = random();
  tokens.set(access, { client_id, scope, resource, exp: Math.floor(Date.now() / 1000) + EXPIRES_IN });
  refreshes.set(refresh, { client_id, scope, resource });
  json(res, 200, { access_token: access, token_type: 'Bearer', expires_in: EXPIRES_IN, refresh_token: refresh,
    ...(scope && { scope }) });
}

const routes = {
  'GET /.well-known/oauth-authorization-server': (req, res) => json(res, 200, {
    issuer, authorization_endpoint: issuer + '/authorize', token_endpoint: issuer + '/token',
    registration_endpoint: issuer + '/register', introspection_endpoint: issuer + '/introspect',
    response_types_supported: ['code'], grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'], scopes_supported: SCOPES,
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    authorization_response_iss_parameter_supported: true,
  }),

  'POST /register': async (req, res) => {
    const meta = JSON.parse(await body(req) || '{}');
    const method = meta.token_endpoint_auth_method || 'client_secret_basic';
    if (!Array.isArray(meta.redirect_uris) || meta.redirect_uris.length === 0) {
      return refuse(res, 400, 'invalid_redirect_uri', 'no redirect_uris');
    }
    const id = random(), secret = method === 'none' ? undefined : random();
    clients.set(id, { secret, method, redirect_uris: meta.redirect_uris });
    log('register ' + method);
    json(res, 201, { ...meta, client_id: id, ...(secret && { client_secret: secret }),
      token_endpoint_auth_method: method });
  },

  'GET /authorize': (req, res, url) => {
    const q = Object.fromEntries(url.searchParams);
    const client = clients.get(q.client_id);
    if (!client || !client.redirect_uris.includes(q.redirect_uri)) {
      return refuse(res, 400, 'invalid_request', 'unknown client or redirect_uri');
    }
    if (q.response_type !== 'code' || q.code_challenge_method !== 'S256' || !q.code_challenge) {
      return refuse(res, 400, 'invalid_request', 'PKCE S256 and response_type code are required');
    }
    const code = random();
    codes.set(code, { client_id: q.client_id, redirect_uri: q.redirect_uri, challenge: q.code_challenge,
      scope: q.scope, resource: q.resource });
    log(`authorize scope=${q.scope || ''} resource=${q.resource || ''}`);
    const back = new URL(q.redirect_uri);
    back.searchParams.set('code', code);
    if (q.state) back.searchParams.set('state', q.state);
    back.searchParams.set('iss', issuer);
    res.writeHead(302, { location: back.toString() });
    res.end();
  },

  'POST /token': async (req, res) => {
    const form = Object.fromEntries(new URLSearchParams(await body(req)));
    const client_id = authenticate(req, form);
    if (!client_id) return refuse(res, 401, 'invalid_client', 'client authentication failed');
    if (form.grant_type === 'authorization_code') {
      const grant = codes.get(form.code);
      codes.delete(form.code);
      if (!grant || grant.client_id !== client_id || grant.redirect_uri !== form.redirect_uri) {
        return refuse(res, 400, 'invalid_grant', 'unknown code');
      }
      if (!form.code_verifier || s256(form.code_verifier) !== grant.challenge) {
        return refuse(res, 400, 'invalid_grant', 'PKCE verifier does not match');
      }
      if (form.resource !== grant.resource) return refuse(res, 400, 'invalid_target', 'resource differs');
      log('token authorization_code');
      return issue(res, client_id, grant.scope, grant.resource);
    }
    if (form.grant_type === 'refresh_token') {
      const grant = refreshes.get(form.refresh_token);
      refreshes.delete(form.refresh_token);
      if (!grant || grant.client_id !== client_id) return refuse(res, 400, 'invalid_grant', 'unknown refresh token');
      log('refresh');
      return issue(res, client_id, grant.scope, grant.resource);
    }
    refuse(res, 400, 'unsupported_grant_type', 'grant_type ' + form.grant_type);
  },

  'POST /introspect': async (req, res) => {
    const form = Object.fromEntries(new URLSearchParams(await body(req)));
    const t = tokens.get(form.token);
    const active = !!t && t.exp > Math.floor(Date.now() / 1000);
    log('introspect ' + (active ? 'active' : 'inactive'));
    json(res, 200, active ? { active, scope: t.scope, aud: t.resource, exp: t.exp, client_id: t.client_id }
      : { active: false });
  },
};

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, issuer);
  const route = routes[`${req.method} ${url.pathname}`];
  if (!route) return json(res, 404, { error: 'not_found' });
  try {
    await route(req, res, url);
  } catch (e) {
    refuse(res, 400, 'invalid_request', String(e.message));
  }
});
server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  log('listening ' + issuer);
});
