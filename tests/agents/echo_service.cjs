// The Node twin of echo_service.py, for tests/test_service_bypass.py: answers GET with its pid, POST with ok.
'use strict';
const http = require('http');

http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const body = JSON.stringify(req.method === 'GET' ? { pid: process.pid } : { ok: true });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(Number(process.env.SVC_PORT), '127.0.0.1', () => console.log('echo_service.cjs listening'));
