import { McpMethods } from '../protocol/methods.js';
import { EXPLORER_FORMS } from './explorer-forms.js';

/**
 * The explorer page's script, plain browser JavaScript (no framework, no download). It speaks
 * 2026-07-28 to the endpoint (stateless: every request carries its `_meta` envelope and the
 * Streamable HTTP headers), reads JSON or SSE answers from `fetch`, and runs the `input_required`
 * rounds with a form per elicitation. Everything it shows goes through `textContent`: no server
 * string ever becomes markup. Written without template literals, so it sits in this one string.
 */
export const EXPLORER_SCRIPT = String.raw`
(function () {
  'use strict';
  var VERSION = '2026-07-28';
  var endpoint = document.body.getAttribute('data-endpoint');
  var nextId = 1;
  var uid = 1;
  var state = { caps: {}, items: { tools: [], resources: [], resourceTemplates: [], prompts: [] } };

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) {
      if (attrs[key] === undefined || attrs[key] === null || attrs[key] === false) continue;
      if (key === 'text') node.textContent = String(attrs[key]);
      else if (key === 'class') node.className = attrs[key];
      else if (key.slice(0, 2) === 'on') node.addEventListener(key.slice(2), attrs[key]);
      else node.setAttribute(key, attrs[key] === true ? '' : String(attrs[key]));
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === undefined || child === null) continue;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function pretty(value) { return JSON.stringify(value, null, 2); }

  /** Mcp-Name carries the name as is when it is plain ASCII, else base64 of its UTF-8. */
  function headerValue(text) {
    if (/^[\x20-\x7e]*$/.test(text) && text.trim() === text) return text;
    var bytes = new TextEncoder().encode(text);
    var binary = '';
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return '=?base64?' + btoa(binary) + '?=';
  }

  function RpcError(error) {
    this.name = 'RpcError';
    this.code = error.code;
    this.message = error.message;
    this.data = error.data;
  }
  RpcError.prototype = Object.create(Error.prototype);

  /**
   * One JSON-RPC request. onMessage gets every notification of the exchange (progress, logs) as
   * it arrives; the promise settles with the response's result or rejects with its error.
   */
  function rpc(method, params, options) {
    options = options || {};
    var id = nextId++;
    var meta = Object.assign({}, params._meta, {
      'io.modelcontextprotocol/protocolVersion': VERSION,
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
      'io.modelcontextprotocol/clientInfo': { name: 'nestjs-model-context-explorer', version: '1.0.0' },
      'io.modelcontextprotocol/logLevel': 'debug'
    });
    var body = { jsonrpc: '2.0', id: id, method: method, params: Object.assign({}, params, { _meta: meta }) };
    var headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': VERSION,
      'Mcp-Method': method
    };
    if (options.name !== undefined) headers['Mcp-Name'] = headerValue(options.name);
    var token = $('token').value.trim();
    if (token) headers.Authorization = 'Bearer ' + token.replace(/^Bearer\s+/i, '');
    return fetch(endpoint, { method: 'POST', headers: headers, body: JSON.stringify(body), credentials: 'omit', cache: 'no-store' }).then(function (res) {
      var type = res.headers.get('content-type') || '';
      var onMessage = options.onMessage || function () {};
      var response;
      function take(message) {
        if (message && message.id === id && ('result' in message || 'error' in message)) response = message;
        // A request refused before its id was read (401, 403, 400) is answered with id null.
        else if (message && message.id === null && 'error' in message && !response) response = message;
        else if (message) onMessage(message);
      }
      var read;
      if (type.indexOf('text/event-stream') !== -1) read = readSse(res, take);
      else if (type.indexOf('json') !== -1) read = res.json().then(function (m) { (Array.isArray(m) ? m : [m]).forEach(take); });
      else read = res.text().then(function (text) { throw new Error('HTTP ' + res.status + ' ' + res.statusText + (text ? ': ' + text : '')); });
      return read.then(function () {
        if (!response) {
          var auth = res.headers.get('www-authenticate');
          throw new Error('HTTP ' + res.status + ': no JSON-RPC response' + (auth ? ' (WWW-Authenticate: ' + auth + ')' : ''));
        }
        if (response.error) {
          if (res.status === 401 || res.status === 403) response.error.message += ' (HTTP ' + res.status + ': paste a bearer token that grants it)';
          throw new RpcError(response.error);
        }
        return response.result;
      });
    });
  }

  /** Server-sent events over the POST response, message by message as they arrive. */
  function readSse(res, take) {
    var reader = res.body.getReader();
    var decoder = new TextDecoder();
    var buffer = '';
    function flush(block) {
      var data = [];
      block.split(/\r?\n/).forEach(function (line) {
        if (line.slice(0, 5) === 'data:') data.push(line.slice(5).replace(/^ /, ''));
      });
      if (data.length === 0) return;
      try { take(JSON.parse(data.join('\n'))); } catch (e) { /* a keep-alive or partial frame */ }
    }
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) { if (buffer.trim()) flush(buffer); return; }
        buffer += decoder.decode(chunk.value, { stream: true });
        var parts = buffer.split(/\r?\n\r?\n/);
        buffer = parts.pop();
        parts.forEach(flush);
        return pump();
      });
    }
    return pump();
  }

  /** Every page of a list. */
  function listAll(method, key) {
    var items = [];
    function page(cursor) {
      return rpc(method, cursor === undefined ? {} : { cursor: cursor }).then(function (result) {
        items = items.concat(result[key] || []);
        if (typeof result.nextCursor === 'string' && items.length < 10000) return page(result.nextCursor);
        return items;
      });
    }
    return page(undefined);
  }

${EXPLORER_FORMS}
  // ---- showing results ----

  function showContent(target, blocks) {
    (blocks || []).forEach(function (block) {
      if (block.type === 'text') target.appendChild(el('pre', { class: 'text', text: block.text }));
      else if ((block.type === 'image') && /^image\/[a-z0-9.+-]+$/i.test(block.mimeType || '') && /^[A-Za-z0-9+/=\s]*$/.test(block.data || '')) {
        target.appendChild(el('img', { class: 'image', alt: 'image result (' + block.mimeType + ')', src: 'data:' + block.mimeType + ';base64,' + block.data }));
      } else if (block.type === 'resource' && block.resource) {
        target.appendChild(el('div', { class: 'meta', text: 'resource ' + block.resource.uri }));
        target.appendChild(el('pre', { class: 'text', text: block.resource.text !== undefined ? block.resource.text : '(binary, ' + (block.resource.mimeType || 'no type') + ')' }));
      } else if (block.type === 'resource_link') target.appendChild(el('div', { class: 'meta', text: 'link ' + block.uri + (block.name ? ' (' + block.name + ')' : '') }));
      else target.appendChild(el('pre', { class: 'text', text: pretty(block) }));
    });
  }

  function showError(target, error) {
    var text = error instanceof RpcError ? 'Error ' + error.code + ': ' + error.message + (error.data !== undefined ? '\n' + pretty(error.data) : '') : String(error && error.message || error);
    target.appendChild(el('div', { class: 'error', role: 'alert', text: text }));
  }

  function onNotification(events, progress) {
    return function (message) {
      if (message.method === 'notifications/progress') {
        var p = message.params || {};
        if (typeof p.total === 'number') { progress.max = p.total; progress.value = p.progress; } else progress.removeAttribute('value');
        progress.hidden = false;
        events.appendChild(el('li', { class: 'progress', text: 'progress ' + p.progress + (p.total !== undefined ? '/' + p.total : '') + (p.message ? ': ' + p.message : '') }));
      } else if (message.method === 'notifications/message') {
        var m = message.params || {};
        events.appendChild(el('li', { class: 'log', text: '[' + m.level + ']' + (m.logger ? ' ' + m.logger : '') + ' ' + (typeof m.data === 'string' ? m.data : JSON.stringify(m.data)) }));
      } else {
        events.appendChild(el('li', { class: 'other', text: message.method + ' ' + JSON.stringify(message.params || {}) }));
      }
    };
  }

  /** Asks the user: a form for a form-mode elicitation, a link for a URL-mode one. */
  function elicit(host, params) {
    return new Promise(function (resolve) {
      var box = el('form', { class: 'elicitation', 'data-elicitation': '' }, el('h3', { text: 'The server asks' }), el('p', { text: params.message || '' }));
      var form = null;
      if (params.mode === 'url') box.appendChild(el('p', { class: 'meta', text: 'Open ' + params.url + ' to continue.' }));
      else form = field(params.requestedSchema || { type: 'object', properties: {} }, '', 'Answer', true);
      if (form) box.appendChild(form.node);
      var done = function (action) {
        return function (event) {
          event.preventDefault();
          var answer = { action: action };
          if (action === 'accept' && form) {
            try { answer.content = form.read(); } catch (e) { showError(box, e); return; }
          }
          box.replaceWith(el('div', { class: 'meta', text: 'You answered: ' + action }));
          resolve(answer);
        };
      };
      box.addEventListener('submit', done('accept'));
      box.appendChild(el('div', { class: 'buttons' },
        el('button', { type: 'submit', text: 'Accept' }),
        el('button', { type: 'button', text: 'Decline', onclick: done('decline') }),
        el('button', { type: 'button', text: 'Cancel', onclick: done('cancel') })));
      host.appendChild(box);
      var first = box.querySelector('input, select, textarea');
      if (first) first.focus();
    });
  }

  /** A call with its input_required rounds: each round's questions answered, then retried. */
  function callWithInput(method, params, name, out, rounds) {
    var events = out.querySelector('.events');
    var progress = out.querySelector('progress');
    var token = 'explorer-' + nextId;
    var sent = Object.assign({}, params, { _meta: { progressToken: token } });
    return rpc(method, sent, { name: name, onMessage: onNotification(events, progress) }).then(function (result) {
      if (!result || result.resultType !== 'input_required') return result;
      if (rounds >= 10) throw new Error(method + ' still asked for input after 10 rounds.');
      var asks = result.inputRequests || {};
      var keys = Object.keys(asks);
      var responses = {};
      return keys.reduce(function (chain, key) {
        return chain.then(function () {
          var ask = asks[key] || {};
          if (ask.method !== 'elicitation/create') throw new Error('The server asked for ' + ask.method + ', which the explorer does not answer.');
          return elicit(out.querySelector('.asks'), ask.params || {}).then(function (answer) { responses[key] = answer; });
        });
      }, Promise.resolve()).then(function () {
        var again = Object.assign({}, params, { inputResponses: responses });
        if (result.requestState !== undefined) again.requestState = result.requestState;
        return callWithInput(method, again, name, out, rounds + 1);
      });
    });
  }

  function outputBox() {
    return el('div', { class: 'output' }, el('progress', { hidden: true }), el('ul', { class: 'events' }), el('div', { class: 'asks' }), el('div', { class: 'result' }));
  }

  // ---- the catalog ----

  function select(kind, item) {
    var detail = clear($('detail'));
    var name = item.name;
    detail.appendChild(el('h2', { text: (item.title || name) }));
    detail.appendChild(el('div', { class: 'meta', text: kind.slice(0, -1) + ' ' + (item.uri || item.uriTemplate || name) }));
    if (item.description) detail.appendChild(el('p', { class: 'description', text: item.description }));
    var form;
    var method;
    var build;
    if (kind === 'tools') {
      if (item.annotations) detail.appendChild(el('div', { class: 'meta', text: 'annotations ' + JSON.stringify(item.annotations) }));
      form = field(item.inputSchema || { type: 'object' }, '', 'Arguments', true);
      method = '${McpMethods.toolsCall.name}';
      build = function () { return [{ name: name, arguments: form.read() }, name]; };
    } else if (kind === 'prompts') {
      var props = {};
      var req = [];
      (item.arguments || []).forEach(function (a) { props[a.name] = { type: 'string', description: a.description }; if (a.required) req.push(a.name); });
      form = field({ type: 'object', properties: props, required: req }, '', 'Arguments', true);
      method = 'prompts/get';
      build = function () { return [{ name: name, arguments: form.read() }, name]; };
    } else if (kind === 'resourceTemplates') {
      var vars = {};
      (item.uriTemplate.match(/\{[^}]+\}/g) || []).forEach(function (expr) {
        expr.slice(1, -1).replace(/^[+#./;?&]/, '').split(',').forEach(function (v) { vars[v.replace(/\*$|:\d+$/, '')] = { type: 'string' }; });
      });
      form = field({ type: 'object', properties: vars, required: Object.keys(vars) }, '', 'Variables', true);
      method = 'resources/read';
      build = function () {
        var values = form.read();
        var uri = item.uriTemplate.replace(/\{([+#./;?&]?)([^}]+)\}/g, function (all, op, names) {
          var parts = names.split(',').map(function (n) {
            var v = values[n.replace(/\*$|:\d+$/, '')] || '';
            return op === '+' || op === '#' ? encodeURI(v) : encodeURIComponent(v);
          });
          var sep = { '': ',', '+': ',', '#': ',', '.': '.', '/': '/', ';': ';', '?': '&', '&': '&' }[op];
          var lead = { '': '', '+': '', '#': '#', '.': '.', '/': '/', ';': ';', '?': '?', '&': '&' }[op];
          return lead + parts.join(sep);
        });
        return [{ uri: uri }, uri];
      };
    } else {
      method = 'resources/read';
      build = function () { return [{ uri: item.uri }, item.uri]; };
    }
    var out = outputBox();
    // novalidate: the server's own validation errors are what the user came to see.
    var formNode = el('form', { id: 'call-form', novalidate: true });
    if (form) formNode.appendChild(form.node);
    var run = el('button', { type: 'submit', id: 'run', text: kind === 'tools' ? 'Call' : kind === 'prompts' ? 'Get' : 'Read' });
    formNode.appendChild(run);
    formNode.addEventListener('submit', function (event) {
      event.preventDefault();
      clear(out.querySelector('.events'));
      clear(out.querySelector('.asks'));
      var result = clear(out.querySelector('.result'));
      result.removeAttribute('data-done');
      out.querySelector('progress').hidden = true;
      var args;
      try { args = build(); } catch (e) { showError(result, e); return; }
      run.disabled = true;
      result.appendChild(el('div', { class: 'meta pending', text: 'Running ' + method + '…' }));
      callWithInput(method, args[0], args[1], out, 0).then(function (value) {
        clear(result);
        if (kind === 'tools') {
          if (value.isError) result.appendChild(el('div', { class: 'error', role: 'alert', text: 'The tool reported an error (isError).' }));
          showContent(result, value.content);
          if (value.structuredContent !== undefined) {
            result.appendChild(el('h3', { text: 'structuredContent' }));
            result.appendChild(el('pre', { class: 'json', text: pretty(value.structuredContent) }));
          }
        } else if (kind === 'prompts') {
          (value.messages || []).forEach(function (m) {
            result.appendChild(el('div', { class: 'meta', text: m.role }));
            showContent(result, Array.isArray(m.content) ? m.content : [m.content]);
          });
        } else {
          (value.contents || []).forEach(function (c) {
            result.appendChild(el('div', { class: 'meta', text: c.uri + (c.mimeType ? ' (' + c.mimeType + ')' : '') }));
            if (c.text !== undefined) result.appendChild(el('pre', { class: 'text', text: c.text }));
            else showContent(result, [{ type: 'image', mimeType: c.mimeType, data: c.blob }]);
          });
        }
        result.setAttribute('data-done', '');
      }, function (error) {
        clear(result);
        showError(result, error);
        result.setAttribute('data-done', '');
      }).then(function () { run.disabled = false; });
    });
    detail.appendChild(formNode);
    detail.appendChild(out);
  }

  function renderLists() {
    var nav = clear($('catalog'));
    [['tools', 'Tools'], ['resources', 'Resources'], ['resourceTemplates', 'Resource templates'], ['prompts', 'Prompts']].forEach(function (pair) {
      var items = state.items[pair[0]];
      var section = el('section', { 'data-kind': pair[0] }, el('h2', { text: pair[1] + ' (' + items.length + ')' }));
      var list = el('ul');
      items.forEach(function (item) {
        var label = item.name || item.uri;
        list.appendChild(el('li', {}, el('button', { type: 'button', class: 'entry', 'data-name': label, title: item.description || '', text: item.title ? item.title + ' · ' + label : label, onclick: function () { select(pair[0], item); } })));
      });
      section.appendChild(list);
      nav.appendChild(section);
    });
  }

  function connect(event) {
    if (event) event.preventDefault();
    var status = clear($('status'));
    status.appendChild(el('span', { text: 'Connecting to ' + endpoint + '…' }));
    rpc('server/discover', {}).then(function (found) {
      var info = found.serverInfo || {};
      state.caps = found.capabilities || {};
      clear(status).appendChild(el('span', { class: 'ok', text: (info.title || info.name || 'server') + ' ' + (info.version || '') }));
      var c = state.caps;
      return Promise.all([
        c.tools ? listAll('tools/list', 'tools') : [],
        c.resources ? listAll('resources/list', 'resources') : [],
        c.resources ? listAll('resources/templates/list', 'resourceTemplates') : [],
        c.prompts ? listAll('prompts/list', 'prompts') : []
      ]).then(function (lists) {
        state.items = { tools: lists[0], resources: lists[1], resourceTemplates: lists[2], prompts: lists[3] };
        renderLists();
        document.body.setAttribute('data-ready', '');
      });
    }).catch(function (error) { clear(status); showError(status, error); });
  }

  $('connect').addEventListener('submit', connect);
  connect();
})();
`;
