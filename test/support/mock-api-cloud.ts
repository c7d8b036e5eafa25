/**
 * The clouds' doors in front of the mock Messages API: what Amazon Bedrock (InvokeModel), Google Vertex AI (rawPredict)
 * and Microsoft Foundry accept, as Anthropic's cloud SDKs send it. Each checks the wire shape and the credential the way
 * the cloud would (Bedrock recomputes the AWS SigV4 signature; Vertex takes only the token this server's stand-in of
 * Google's token service issued), then hands the request on as a Messages API body (model and stream from the path).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { crc32 } from 'node:zlib';
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { RequestBody } from './mock-api.js';

/** Which cloud the server stands in for, and the credential it accepts. */
export type CloudStandIn =
  /** `badCrc`: every stream frame's message CRC is off by one (the SDK must refuse the stream). */
  | { kind: 'bedrock'; region: string; accessKeyId: string; secretAccessKey: string; badCrc?: boolean }
  /** POST /token is Google's security token service: it trades `subjectToken` for the access token `token`. */
  | { kind: 'vertex'; project: string; region: string; token: string; subjectToken: string }
  | { kind: 'foundry'; apiKey: string };

export type Framing = 'sse' | 'eventstream' | 'eventstream-bad-crc';

/** A request the cloud accepted, as the Messages API would have received it. */
export interface CloudAccepted {
  body: RequestBody;
  /** Bedrock streams in AWS event-stream frames (with a wrong CRC when asked); the others in SSE. */
  framing: Framing;
}

/** What the door did: accepted, refused (status and message), or answered itself (Vertex's token endpoint). */
export type CloudVerdict =
  | { kind: 'accepted'; request: CloudAccepted }
  | { kind: 'refused'; status: number; type: string; message: string }
  | { kind: 'answered'; status: number; body: unknown };

const BEDROCK_PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;
const VERTEX_PATH = /^\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

/** Checks one request at the cloud's door. `path` is without the query; `raw` is the body as sent (it is signed). */
export async function cloudDoor(
  cloud: CloudStandIn,
  method: string,
  path: string,
  query: string,
  headers: IncomingHttpHeaders,
  raw: string,
  parsed: unknown,
): Promise<CloudVerdict> {
  const refuse = (status: number, type: string, message: string): CloudVerdict => ({ kind: 'refused', status, type, message });
  const body = (parsed ?? {}) as RequestBody;
  switch (cloud.kind) {
    case 'foundry': {
      if (method !== 'POST' || path !== '/v1/messages') return refuse(404, 'not_found_error', `Not found: ${method} ${path}`);
      if (headers['x-api-key'] !== cloud.apiKey) return refuse(401, 'authentication_error', 'invalid x-api-key');
      if (headers.authorization !== undefined) return refuse(400, 'invalid_request_error', 'Foundry takes the key in x-api-key only');
      return { kind: 'accepted', request: { body, framing: 'sse' } };
    }
    case 'bedrock': {
      const match = BEDROCK_PATH.exec(path);
      if (method !== 'POST' || !match) return refuse(404, 'not_found_error', `Not found: ${method} ${path}`);
      const problem = (await sigV4Problem(cloud, method, path, query, headers, raw)) ?? versionProblem(body);
      if (problem) return refuse(problem.startsWith('signature') ? 403 : 400, problem.startsWith('signature') ? 'permission_error' : 'invalid_request_error', problem);
      const stream = match[2] === 'invoke-with-response-stream';
      return { kind: 'accepted', request: { body: { ...body, model: decodeURIComponent(match[1]!), stream }, framing: !stream ? 'sse' : cloud.badCrc ? 'eventstream-bad-crc' : 'eventstream' } };
    }
    case 'vertex': {
      if (method === 'POST' && path === '/token') return tokenAnswer(cloud, raw);
      const match = VERTEX_PATH.exec(path);
      if (method !== 'POST' || !match) return refuse(404, 'not_found_error', `Not found: ${method} ${path}`);
      if (headers.authorization !== `Bearer ${cloud.token}`) return refuse(401, 'authentication_error', 'no valid Google access token');
      if (match[1] !== cloud.project || match[2] !== cloud.region) return refuse(404, 'not_found_error', `no such project or location: ${match[1]}/${match[2]}`);
      const problem = versionProblem(body);
      if (problem) return refuse(400, 'invalid_request_error', problem);
      return { kind: 'accepted', request: { body: { ...body, model: decodeURIComponent(match[3]!), stream: match[4] === 'streamRawPredict' }, framing: 'sse' } };
    }
  }
}

/**
 * Both clouds take the API version in the body (the SDK moves its anthropic-version header there; legacy documents
 * name `bedrock-2023-05-31` and `vertex-2023-10-16`, the SDK sends its own version) and the model in the path only.
 */
function versionProblem(body: RequestBody): string | null {
  if (typeof body['anthropic_version'] !== 'string' || body['anthropic_version'] === '') return 'anthropic_version: Field required';
  if ('model' in body) return 'model: Extra inputs are not permitted (the model is in the path)';
  return null;
}

/**
 * AWS SigV4 as Bedrock checks it: the signature is recomputed from the request as received (method, path, query, the
 * signed headers, the body's hash) with the secret key, and must match.
 */
async function sigV4Problem(
  cloud: Extract<CloudStandIn, { kind: 'bedrock' }>,
  method: string,
  path: string,
  query: string,
  headers: IncomingHttpHeaders,
  raw: string,
): Promise<string | null> {
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/bedrock\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
    String(headers.authorization ?? ''),
  );
  if (!auth) return `signature missing or not SigV4 for bedrock: ${JSON.stringify(headers.authorization ?? null)}`;
  const [, keyId, , region, signedNames, signature] = auth;
  if (keyId !== cloud.accessKeyId) return `signature by an unknown access key ${keyId}`;
  if (region !== cloud.region) return `signature for region ${region}, not ${cloud.region}`;
  const date = String(headers['x-amz-date'] ?? '');
  const when = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!when) return 'signature without x-amz-date';
  const signed: Record<string, string> = {};
  for (const name of signedNames!.split(';')) signed[name] = String(headers[name] ?? '');
  const request = new HttpRequest({ method, protocol: 'http:', hostname: signed['host'], path, query: queryObject(query), headers: signed, body: raw });
  const signer = new SignatureV4({ service: 'bedrock', region: cloud.region, sha256: Sha256, credentials: { accessKeyId: cloud.accessKeyId, secretAccessKey: cloud.secretAccessKey } });
  const signingDate = new Date(Date.UTC(+when[1]!, +when[2]! - 1, +when[3]!, +when[4]!, +when[5]!, +when[6]!));
  const again = await signer.sign(request, { signingDate });
  const expected = /Signature=([0-9a-f]{64})/.exec(String(again.headers['authorization']))?.[1];
  return expected === signature ? null : 'signature does not match the request (SigV4)';
}

function queryObject(query: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(query));
}

/**
 * Google's security token service as a workload-identity credential file (`external_account`, what a CI job's OIDC
 * token is traded through) uses it: an RFC 8693 token exchange of the subject token for an access token, asked for
 * the cloud-platform scope.
 */
function tokenAnswer(cloud: Extract<CloudStandIn, { kind: 'vertex' }>, raw: string): CloudVerdict {
  const form = new URLSearchParams(raw);
  const refuse = (message: string): CloudVerdict => ({ kind: 'answered', status: 400, body: { error: 'invalid_grant', error_description: message } });
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange') return refuse(`grant_type ${form.get('grant_type')}`);
  if (form.get('subject_token') !== cloud.subjectToken) return refuse('subject_token is not the one this test issued');
  if (!(form.get('scope') ?? '').split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return refuse(`scope ${form.get('scope')}`);
  return {
    kind: 'answered',
    status: 200,
    body: { access_token: cloud.token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 3600 },
  };
}

/**
 * One AWS event-stream frame as Bedrock's InvokeModelWithResponseStream sends a chunk: prelude (total and header
 * lengths, CRC32 of both), string headers `:event-type` chunk, `:content-type` application/json, `:message-type`
 * event, the payload `{"bytes": base64(event JSON)}`, and the CRC32 of everything before it (the SDK verifies both).
 */
export function eventStreamFrame(event: object, badCrc = false): Buffer {
  const payload = Buffer.from(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));
  const headers = Buffer.concat(
    [
      [':event-type', 'chunk'],
      [':content-type', 'application/json'],
      [':message-type', 'event'],
    ].map(([name, value]) => {
      const n = Buffer.from(name!);
      const v = Buffer.from(value!);
      const len = Buffer.alloc(2);
      len.writeUInt16BE(v.length);
      // Header value type 7: a string with a two-byte length.
      return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), len, v]);
    }),
  );
  const total = 12 + headers.length + payload.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headers.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, headers, payload]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE((crc32(body) + (badCrc ? 1 : 0)) >>> 0);
  return Buffer.concat([body, crc]);
}
