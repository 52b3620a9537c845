// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Validates OTLP JSON lines against OpenTelemetry's own protobuf
// definitions: the generated root shipped in the npm package
// @opentelemetry/otlp-transformer (installed by tests/lib/otlp.sh).
//
//   node otlp_check.js MODULES_DIR FILE...   each line an ExportTraceServiceRequest
//   node otlp_check.js MODULES_DIR --selftest FILE
//        every mutation of FILE's first line that a collector would refuse
//        must be refused here too
//
// A line is read as a collector's OTLP/JSON decoder does: trace and span
// ids as hex (exactly 32 and 16 digits), 64-bit integers as decimal
// strings or numbers, enums as numbers. Then the message is verified with
// the generated code (types, enum values, oneofs), encoded to protobuf
// and decoded again, and the result must hold every field of the line:
// a field the definitions do not know, or a value that does not survive,
// is an error.
'use strict';
const path = require('path');
const fs = require('fs');

const modules = process.argv[2];
const root = require(path.join(modules,
	'@opentelemetry/otlp-transformer/build/src/generated/root.js'));
const Long = require(path.join(modules, 'protobufjs/minimal')).util.Long;
const v1 = root.opentelemetry.proto;
const Request = v1.collector.trace.v1.ExportTraceServiceRequest;

const ID_BYTES = { traceId: 16, spanId: 8, parentSpanId: 8 };
const INT64 = new Set(['timeUnixNano', 'startTimeUnixNano',
	'endTimeUnixNano', 'intValue', 'observedTimeUnixNano']);

// OTLP JSON -> the object protobufjs' fromObject takes (bytes as base64,
// int64 as Long); throws on ids or integers a collector would refuse.
function toProto(v, key, where) {
	if (Array.isArray(v))
		return v.map((x, i) => toProto(x, key, `${where}[${i}]`));
	if (v !== null && typeof v === 'object') {
		const out = {};
		for (const [k, x] of Object.entries(v))
			out[k] = toProto(x, k, `${where}.${k}`);
		return out;
	}
	if (key in ID_BYTES) {
		if (typeof v !== 'string' ||
		    !(v === '' && key === 'parentSpanId') &&
		    !new RegExp(`^[0-9a-fA-F]{${ID_BYTES[key] * 2}}$`).test(v))
			throw new Error(`${where}: not ${ID_BYTES[key] * 2} hex digits: ${JSON.stringify(v)}`);
		return Buffer.from(v, 'hex').toString('base64');
	}
	if (INT64.has(key)) {
		if (typeof v === 'number' && Number.isSafeInteger(v))
			return Long.fromNumber(v, key !== 'intValue');
		if (typeof v !== 'string' || !/^-?[0-9]+$/.test(v))
			throw new Error(`${where}: not a 64-bit integer: ${JSON.stringify(v)}`);
		const l = Long.fromString(v, key !== 'intValue');
		if (l.toString() !== v.replace(/^(-?)0+(?=\d)/, '$1'))
			throw new Error(`${where}: out of the 64-bit range: ${v}`);
		return l;
	}
	return v;
}

// Both sides in one form: ids hex, int64 decimal strings, fields at
// their default value dropped (protobuf does not send them).
function canon(v, key) {
	if (Array.isArray(v)) {
		const a = v.map((x) => canon(x, key));
		return a.length ? a : undefined;
	}
	if (v !== null && typeof v === 'object') {
		const out = {};
		for (const k of Object.keys(v).sort()) {
			const x = canon(v[k], k);
			if (x !== undefined)
				out[k] = x;
		}
		return Object.keys(out).length || key === 'value' ? out : undefined;
	}
	if (key in ID_BYTES && typeof v === 'string' && !/^[0-9a-fA-F]*$/.test(v))
		v = Buffer.from(v, 'base64').toString('hex');
	if (key in ID_BYTES && typeof v === 'string')
		v = v.toLowerCase();
	if (INT64.has(key))
		v = String(v);
	if (v === '' || v === 0 || v === '0' || v === false)
		return key === 'value' ? v : undefined;
	return v;
}

function diff(a, b, where, out) {
	if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) ||
	    (typeof a !== 'object' && a !== b)) {
		out.push(`${where}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`);
		return;
	}
	if (typeof a !== 'object' || a === null)
		return;
	for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
		if (!(k in b))
			out.push(`${where}.${k}: not a field of the OTLP definition`);
		else if (!(k in a))
			out.push(`${where}.${k}: appeared`);
		else
			diff(a[k], b[k], `${where}.${k}`, out);
	}
}

// Returns the problems of one line (none: valid), and the span count.
function check(line) {
	let obj;
	try {
		obj = JSON.parse(line);
	} catch (e) {
		return { errors: [`not JSON: ${e.message}`] };
	}
	let proto;
	try {
		proto = toProto(obj, '', 'request');
	} catch (e) {
		return { errors: [e.message] };
	}
	const err = Request.verify(proto);
	if (err)
		return { errors: [`verify: ${err}`] };
	const msg = Request.fromObject(proto);
	const back = Request.toObject(Request.decode(Request.encode(msg).finish()),
		{ longs: String, bytes: String, enums: Number });
	const errors = [];
	diff(canon(obj, ''), canon(back, ''), 'request', errors);
	let spans = 0;
	for (const rs of back.resourceSpans || [])
		for (const ss of rs.scopeSpans || [])
			spans += (ss.spans || []).length;
	if (!spans)
		errors.push('no span');
	return { errors, spans };
}

// Each mutation stands for something a collector's decoder refuses.
function selftest(line) {
	const mutations = {
		'an unknown field': (r) => { r.resourceSpans[0].scopeSpans[0].spans[0].spanID = 'x'; },
		'a span id of 15 hex digits': (r) => { r.resourceSpans[0].scopeSpans[0].spans[0].spanId = 'abcdef012345678'; },
		'a trace id in base64': (r) => { r.resourceSpans[0].scopeSpans[0].spans[0].traceId = Buffer.from('0123456789abcdef').toString('base64'); },
		'a time that is not an integer': (r) => { r.resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano = '1.5e9'; },
		'a kind that is no SpanKind': (r) => { r.resourceSpans[0].scopeSpans[0].spans[0].kind = 9; },
		'an attribute value that is not an AnyValue': (r) => { r.resourceSpans[0].resource.attributes[0].value = 'frontend'; },
		'an AnyValue with two values': (r) => { r.resourceSpans[0].resource.attributes[0].value.intValue = '1'; },
		'a name that is not a string': (r) => { r.resourceSpans[0].scopeSpans[0].spans[0].name = 7; },
		'spans that are not a list': (r) => { r.resourceSpans[0].scopeSpans[0].spans = {}; },
	};
	let bad = 0;
	if (check(line).errors.length) {
		console.log(`the line itself is refused: ${check(line).errors}`);
		return 1;
	}
	for (const [what, mutate] of Object.entries(mutations)) {
		const r = JSON.parse(line);
		mutate(r);
		const res = check(JSON.stringify(r));
		if (res.errors.length)
			console.log(`ok: ${what} is refused: ${res.errors[0]}`);
		else {
			console.log(`FAIL: ${what} passes`);
			bad++;
		}
	}
	return bad ? 1 : 0;
}

function main() {
	const args = process.argv.slice(3);
	if (args[0] === '--selftest') {
		const line = fs.readFileSync(args[1], 'utf8').split('\n')[0];
		return selftest(line);
	}
	let lines = 0, spans = 0, bad = 0;
	for (const file of args) {
		fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
			if (!line.trim())
				return;
			lines++;
			const res = check(line);
			spans += res.spans || 0;
			for (const e of res.errors) {
				if (bad++ < 20)
					console.log(`${file}:${i + 1}: ${e}`);
			}
		});
	}
	console.log(`${lines} ExportTraceServiceRequest lines, ${spans} spans, ${bad} problem(s)`);
	return bad || !lines ? 1 : 0;
}

process.exitCode = main();
