/**
 * The explorer page's form builder (plain browser JavaScript, part of EXPLORER_SCRIPT's closure):
 * one input per JSON Schema property, read back into the arguments object. Written without
 * template literals, like the rest of the page's script.
 */
export const EXPLORER_FORMS = String.raw`
  // ---- forms from JSON Schema ----

  function typeOf(schema) {
    var type = schema.type;
    if (Array.isArray(type)) type = type.filter(function (t) { return t !== 'null'; })[0];
    if (!type) {
      var alt = (schema.anyOf || schema.oneOf || []).filter(function (s) { return s && s.type !== 'null'; })[0];
      if (alt) return typeOf(alt);
      if (schema.properties) return 'object';
      if (Array.isArray(schema.enum)) return 'enum';
    }
    return type || 'json';
  }

  /** A field for one schema: { node, read() } where read() gives the value or undefined. */
  function field(schema, path, label, required) {
    schema = schema || {};
    var type = typeOf(schema);
    var hint = schema.description ? el('small', { class: 'hint', text: schema.description }) : null;
    var caption = el('span', { class: 'name', text: (schema.title || label) + (required ? ' *' : '') });
    if (type === 'object') {
      var children = [];
      var fieldset = el('fieldset', { 'data-path': path }, el('legend', { text: label + (required ? ' *' : '') }), hint);
      var req = schema.required || [];
      Object.keys(schema.properties || {}).forEach(function (name) {
        var child = field(schema.properties[name], path ? path + '.' + name : name, name, req.indexOf(name) !== -1);
        children.push([name, child]);
        fieldset.appendChild(child.node);
      });
      return {
        node: fieldset,
        read: function () {
          var out = {};
          var any = false;
          children.forEach(function (pair) {
            var v = pair[1].read();
            if (v !== undefined) { out[pair[0]] = v; any = true; }
          });
          return any || required || !path ? out : undefined;
        }
      };
    }
    if (type === 'array' && schema.items && typeOf(schema.items) !== 'json') {
      var rows = [];
      var list = el('div', { class: 'items' });
      var box = el('fieldset', { 'data-path': path }, el('legend', { text: label + (required ? ' *' : '') }), hint, list);
      var add = function (value) {
        var item = field(schema.items, path + '[' + rows.length + ']', label + ' ' + (rows.length + 1), true);
        if (value !== undefined) item.set && item.set(value);
        var row = el('div', { class: 'item' }, item.node);
        var entry = { item: item, row: row };
        row.appendChild(el('button', { type: 'button', class: 'small', text: 'Remove', onclick: function () {
          rows.splice(rows.indexOf(entry), 1);
          list.removeChild(row);
        } }));
        rows.push(entry);
        list.appendChild(row);
      };
      box.appendChild(el('button', { type: 'button', class: 'small', text: 'Add ' + label, onclick: function () { add(); } }));
      if (Array.isArray(schema.default)) schema.default.forEach(add);
      return {
        node: box,
        read: function () {
          if (rows.length === 0) return required ? [] : undefined;
          return rows.map(function (r) { return r.item.read(); }).filter(function (v) { return v !== undefined; });
        }
      };
    }
    var input;
    var read;
    var values = Array.isArray(schema.enum) ? schema.enum : null;
    var fid = 'f' + (uid++);
    if (values) {
      input = el('select', { name: path, id: fid });
      if (!required || !('default' in schema)) input.appendChild(el('option', { value: '', text: required ? '(choose)' : '(none)' }));
      values.forEach(function (v, i) {
        if (v === null) return;
        input.appendChild(el('option', { value: String(i), text: String(v), selected: 'default' in schema && schema.default === v }));
      });
      read = function () { return input.value === '' ? undefined : values[Number(input.value)]; };
    } else if (type === 'boolean') {
      input = el('input', { type: 'checkbox', name: path, id: fid });
      input.checked = schema.default === true;
      var touched = false;
      input.addEventListener('change', function () { touched = true; });
      read = function () { return touched || required || 'default' in schema ? input.checked : undefined; };
    } else if (type === 'integer' || type === 'number') {
      input = el('input', { type: 'number', name: path, id: fid, step: type === 'integer' ? '1' : 'any', min: schema.minimum, max: schema.maximum, placeholder: type });
      if ('default' in schema) input.value = String(schema.default);
      read = function () { return input.value === '' ? undefined : Number(input.value); };
    } else if (type === 'string') {
      var kinds = { date: 'date', 'date-time': 'datetime-local', email: 'email', uri: 'url', url: 'url', time: 'time' };
      var kind = kinds[schema.format] || 'text';
      input = schema.maxLength > 200 ? el('textarea', { name: path, id: fid, rows: 3 }) : el('input', { type: kind, name: path, id: fid, placeholder: schema.format || '' });
      if (schema.minLength) input.setAttribute('minlength', schema.minLength);
      if (schema.maxLength) input.setAttribute('maxlength', schema.maxLength);
      if ('default' in schema) input.value = String(schema.default);
      read = function () {
        if (input.value === '') return undefined;
        return kind === 'datetime-local' ? new Date(input.value).toISOString() : input.value;
      };
    } else {
      input = el('textarea', { name: path, id: fid, rows: 3, placeholder: 'JSON' });
      if ('default' in schema) input.value = JSON.stringify(schema.default);
      read = function () {
        if (input.value.trim() === '') return undefined;
        try { return JSON.parse(input.value); } catch (e) { throw new Error(path + ': not valid JSON (' + e.message + ')'); }
      };
    }
    var labelNode = el('label', { class: 'field', for: fid }, caption, input, hint);
    return {
      node: labelNode,
      read: read,
      set: function (value) { if (input.type === 'checkbox') input.checked = !!value; else input.value = String(value); }
    };
  }

`;
