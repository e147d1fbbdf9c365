/**
 * Inside a Node service the gate started: note every connection that did not come from the gate.
 *
 * The Node twin of chaos_gate_agent/peers.py (which says why): loaded by register.cjs when the gate
 * set CHAOS_GATE_PEER_LOG. Every net.Server (http, https, express, fastify...) announces an accepted
 * socket with its 'connection' event; the peer's socket is looked up in /proc/net/tcp{,6}, whose uid
 * column names its owner, and a uid that is neither the gate's nor this service's own is appended to
 * the log as one line. Never throws into the service.
 */
'use strict';

const fs = require('fs');
const net = require('net');

const log = process.env.CHAOS_GATE_PEER_LOG;
const trusted = new Set((process.env.CHAOS_GATE_PEERS_OK || '').split(',').filter((u) => /^\d+$/.test(u)).map(Number));
trusted.add(process.getuid());

function write(line) {
  fs.appendFileSync(log, line + '\n', { mode: 0o600 });
}

function bytesOf(ip) {
  // the 16 bytes of an IPv6 address, or the 4 of an IPv4 one
  if (net.isIPv4(ip)) return ip.split('.').map(Number);
  let text = ip;
  let v4 = [];
  const tail4 = text.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (tail4) { v4 = tail4[2].split('.').map(Number); text = tail4[1] + '0:0'; }  // the IPv4 tail: two groups
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === null ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const bytes = [];
  for (const g of groups) { const n = parseInt(g || '0', 16); bytes.push(n >> 8, n & 255); }
  if (v4.length) bytes.splice(12, 4, ...v4);
  return bytes;
}

function hex(ip, port) {
  // how /proc/net/tcp{,6} spell ip:port: each 32-bit word little-endian; an IPv4 peer as itself or v4-mapped
  const plain = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  const forms = [];
  const b = bytesOf(plain);
  if (b.length === 4) forms.push(b, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, ...b]); else forms.push(b);
  const p = port.toString(16).toUpperCase().padStart(4, '0');
  return new Set(forms.map((f) => {
    let out = '';
    for (let i = 0; i < f.length; i += 4) {
      out += f.slice(i, i + 4).reverse().map((x) => x.toString(16).toUpperCase().padStart(2, '0')).join('');
    }
    return out + ':' + p;
  }));
}

function owner(socket) {
  const peer = hex(socket.remoteAddress, socket.remotePort);
  const local = hex(socket.localAddress, socket.localPort);
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let rows;
    try { rows = fs.readFileSync(table, 'utf8').split('\n').slice(1); } catch (e) { continue; }
    for (const row of rows) {
      const cols = row.trim().split(/\s+/);
      if (cols.length > 7 && peer.has(cols[1]) && local.has(cols[2])) return Number(cols[7]);
    }
  }
  return null;
}

if (log && !net.Server.prototype.emit.chaosGate) {
  const emit = net.Server.prototype.emit;
  const watched = function (event, socket, ...rest) {
    if (event === 'connection' && socket && socket.remotePort) {
      try {
        const uid = owner(socket);
        if (uid === null || !trusted.has(uid)) {
          write(`peer ${uid === null ? '?' : uid} ${socket.remoteAddress}:${socket.remotePort} ${process.pid}`);
        }
      } catch (e) { /* never break the service */ }
    }
    return emit.call(this, event, socket, ...rest);
  };
  watched.chaosGate = true;
  net.Server.prototype.emit = watched;
  try { write(`watching ${process.pid}`); } catch (e) { /* the gate reports the service as not watched */ }
}
