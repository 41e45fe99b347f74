// The public API, as any front end calls it: JSON in and out, problems (RFC 9457) thrown as ApiError.

export class ApiError extends Error {
  constructor(problem, status) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.problem = problem;
    this.status = status;
  }
}

// api("/v1/games", {method: "POST", body, token, key}): the answer's JSON (null for 204).
export async function api(path, {method = "GET", body, token, key, version} = {}) {
  const headers = {Accept: "application/json"};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (key) headers["Idempotency-Key"] = key;
  if (version !== undefined) headers["If-Match"] = `"${version}"`;
  const answer = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  if (answer.status === 204) return null;
  const data = await answer.json().catch(() => ({title: answer.statusText}));
  if (!answer.ok) throw new ApiError(data, answer.status);
  return data;
}

// The seat tokens this tab holds, by game: {game id: {seat: token}} in sessionStorage (never a URL).
export const tokens = {
  all(gameId) {
    return JSON.parse(sessionStorage.getItem(`kifu:tokens:${gameId}`) || "{}");
  },
  put(gameId, seat, token) {
    const held = tokens.all(gameId);
    held[seat] = token;
    sessionStorage.setItem(`kifu:tokens:${gameId}`, JSON.stringify(held));
  },
};

// A fresh Idempotency-Key (so a double click never acts twice: the second send answers the first).
export function newKey() {
  return crypto.randomUUID();
}
