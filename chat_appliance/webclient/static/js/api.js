// The API under /json, authenticated by the session cookie; every change carries the CSRF token.

export const csrfToken = () => document.querySelector('meta[name="csrf-token"]').content;

export class ApiError extends Error {
  // `retryAfter`: the seconds a RATE_LIMIT_HIT asks to wait, from its body's retry-after (Zulip's
  // field) or else the Retry-After header; null when the answer names none.
  constructor(status, body, headers = null) {
    super((body && body.msg) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.body = body;
    const wait = Number((body && body["retry-after"]) ?? headers?.get("Retry-After") ?? NaN);
    this.retryAfter = Number.isFinite(wait) && wait >= 0 ? wait : null;
  }
}

// Parameters as the zulip library sends them: strings raw, anything else JSON.
function encode(params) {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value === undefined || value === null) continue;
    form.append(key, typeof value === "string" ? value : JSON.stringify(value));
  }
  return form;
}

// `keepalive`: the request outlives the page (one sent as the page is left).
export async function call(method, path, params, { signal, body, keepalive = false } = {}) {
  let url = path.startsWith("/") ? path : `/json/${path}`;
  // The token goes with every request, reads included: the event loop's /json/events checks it
  // without knowing the method.
  const init = { method, headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin", signal, keepalive };
  if (body) init.body = body;
  else if (method === "GET") {
    const query = encode(params).toString();
    if (query) url += `?${query}`;
  } else init.body = encode(params);
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, { msg: "The server cannot be reached.", code: "NETWORK" });
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok || !data || data.result !== "success") throw new ApiError(response.status, data, response.headers);
  return data;
}

export const get = (path, params, options) => call("GET", path, params, options);
export const post = (path, params, options) => call("POST", path, params, options);
export const patch = (path, params, options) => call("PATCH", path, params, options);
export const del = (path, params, options) => call("DELETE", path, params, options);

export function upload(file) {
  const form = new FormData();
  form.append("file", file, file.name || "pasted-file");
  return call("POST", "user_uploads", null, { body: form });
}

// Sign-in has no CSRF token yet; the X-Requested-With header shows it comes from this page.
export async function signIn(path, params) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "X-Requested-With": "XMLHttpRequest" },
    body: encode(params),
    credentials: "same-origin",
  });
  const data = await response.json().catch(() => null);
  if (!response.ok || !data || data.result !== "success") throw new ApiError(response.status, data, response.headers);
  return data;
}
