(function () {
  "use strict";
  // Every piece of session text reaches the page through textContent or a text node:
  // nothing from the session is ever parsed as HTML, and no link is ever made from it.

  var mark = window.performance && performance.mark ? function (n) { performance.mark(n); } : function () {};
  mark("ptree-start");
  var data = JSON.parse(document.getElementById("ptree-data").textContent);
  mark("ptree-parsed");
  var E = data.entries;
  var N = E.length;
  var ROW_H = 24;
  var WINDOW = 60; // cards rendered around a target
  var STEP = 40; // cards added when scrolling past an end
  var MAX_CARDS = 320; // cards kept in the page at once

  // ---------------------------------------------------------------- the tree
  var index = new Map();
  for (var i = 0; i < N; i++) index.set(E[i].id, i);
  var parent = new Int32Array(N);
  var nkids = new Int32Array(N);
  var roots = [];
  for (i = 0; i < N; i++) {
    var pid = E[i].parentId;
    var p = pid == null ? -1 : index.has(pid) ? index.get(pid) : -1;
    parent[i] = p;
    if (p < 0) roots.push(i);
    else nkids[p]++;
  }
  // children in file order, as one flat array (CSR)
  var kidStart = new Int32Array(N + 1);
  for (i = 0; i < N; i++) kidStart[i + 1] = kidStart[i] + nkids[i];
  var kids = new Int32Array(kidStart[N]);
  var fill = new Int32Array(N);
  for (i = 0; i < N; i++) {
    p = parent[i];
    if (p >= 0) kids[kidStart[p] + fill[p]++] = i;
  }
  function childAt(p, k) { return kids[kidStart[p] + k]; }
  function siblingsOf(i) {
    var p = parent[i];
    if (p < 0) return roots;
    return Array.prototype.slice.call(kids, kidStart[p], kidStart[p + 1]);
  }
  function siblingCount(i) { var p = parent[i]; return p < 0 ? roots.length : nkids[p]; }

  // pre-order rows for the tree panel, and each entry's indent level: a chain of single
  // children stays in one column; the level grows only where the conversation branches.
  var order = new Int32Array(N);
  var row = new Int32Array(N);
  var level = new Int32Array(N);
  var stack = [];
  for (i = roots.length - 1; i >= 0; i--) stack.push(roots[i]);
  var k = 0;
  while (stack.length) {
    var x = stack.pop();
    order[k] = x;
    row[x] = k++;
    p = parent[x];
    var branchy = p < 0 ? roots.length > 1 : nkids[p] > 1;
    level[x] = (p < 0 ? 0 : level[p]) + (branchy ? 1 : 0);
    for (var c = nkids[x] - 1; c >= 0; c--) stack.push(childAt(x, c));
  }
  var ROWS = k;
  // the newest leaf under each entry: the leaf written last in the file
  var newest = new Int32Array(N);
  for (i = 0; i < N; i++) newest[i] = nkids[i] === 0 ? i : -1;
  for (k = ROWS - 1; k >= 0; k--) {
    x = order[k];
    p = parent[x];
    if (p >= 0 && newest[x] > newest[p]) newest[p] = newest[x];
  }

  mark("ptree-indexed");
  var labels = data.labels || {};
  var sessionLeaf = data.leaf == null || !index.has(data.leaf) ? -1 : index.get(data.leaf);

  // ---------------------------------------------------------------- text helpers
  var CTL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
  var CTL_G = new RegExp(CTL.source, "g");

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) addText(e, String(text));
    return e;
  }
  function codeName(ch) {
    var n = ch.charCodeAt(0);
    if (n === 0x1b) return "ESC";
    return "U+" + ("000" + n.toString(16).toUpperCase()).slice(-4);
  }
  // text as text nodes; control and bidirectional-override characters become visible
  // markers, so they can neither reorder what is shown nor hide anything.
  function addText(parentEl, s, hl) {
    if (!CTL.test(s)) { addMarked(parentEl, s, hl); return; }
    var last = 0, m;
    CTL_G.lastIndex = 0;
    while ((m = CTL_G.exec(s)) !== null) {
      if (m.index > last) addMarked(parentEl, s.slice(last, m.index), hl);
      var mark = document.createElement("span");
      mark.className = "ctl";
      mark.title = "control character";
      mark.textContent = codeName(m[0]);
      parentEl.appendChild(mark);
      last = m.index + 1;
    }
    if (last < s.length) addMarked(parentEl, s.slice(last), hl);
  }
  function addMarked(parentEl, s, hl) {
    if (!hl) { parentEl.appendChild(document.createTextNode(s)); return; }
    var low = s.toLowerCase(), from = 0, at;
    while ((at = low.indexOf(hl, from)) >= 0) {
      if (at > from) parentEl.appendChild(document.createTextNode(s.slice(from, at)));
      var m = document.createElement("mark");
      m.textContent = s.slice(at, at + hl.length);
      parentEl.appendChild(m);
      from = at + hl.length;
    }
    if (from < s.length) parentEl.appendChild(document.createTextNode(s.slice(from)));
  }
  function str(v) { return typeof v === "string" ? v : v == null ? "" : JSON.stringify(v, null, 2); }
  function lines(s) { var n = 1; for (var j = s.indexOf("\n"); j >= 0; j = s.indexOf("\n", j + 1)) n++; return n; }

  // Markdown, a small safe part of it: fenced code blocks, inline code, headings.
  var FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
  function renderText(s, hl) {
    var frag = document.createDocumentFragment();
    var ls = s.split("\n");
    var buf = [];
    function flush() {
      if (!buf.length) return;
      var d = el("div", "text");
      for (var j = 0; j < buf.length; j++) {
        if (j) d.appendChild(document.createTextNode("\n"));
        var line = buf[j];
        var h = /^#{1,6} /.test(line);
        var target = h ? d.appendChild(el("span", "h")) : d;
        inline(target, line, hl);
      }
      // trim a paragraph's blank edges
      frag.appendChild(d);
      buf = [];
    }
    for (var j = 0; j < ls.length; j++) {
      var m = FENCE.exec(ls[j]);
      if (!m) { buf.push(ls[j]); continue; }
      flush();
      var fence = m[1], code = [];
      for (j = j + 1; j < ls.length; j++) {
        var t = ls[j].replace(/^ {0,3}/, "");
        if (t.charAt(0) === fence.charAt(0) && t.slice(0, fence.length) === fence && /^[`~]*\s*$/.test(t)) break;
        code.push(ls[j]);
      }
      var pre = el("pre");
      addText(pre, code.join("\n"), hl);
      frag.appendChild(pre);
    }
    flush();
    return frag;
  }
  function inline(target, line, hl) {
    var parts = line.split(/(`[^`\n]+`)/);
    for (var j = 0; j < parts.length; j++) {
      var part = parts[j];
      if (!part) continue;
      if (part.length > 2 && part.charAt(0) === "`" && part.charAt(part.length - 1) === "`") {
        var c = document.createElement("code");
        addText(c, part.slice(1, -1), hl);
        target.appendChild(c);
      } else addText(target, part, hl);
    }
  }

  // long text: the first part now, the rest on request
  var CHUNK = 20000;
  function preText(s, hl, cls) {
    var pre = el("pre", cls || "wrap");
    if (s.length <= CHUNK || (hl && s.toLowerCase().indexOf(hl) >= CHUNK)) {
      addText(pre, s, hl);
      return pre;
    }
    addText(pre, s.slice(0, CHUNK), hl);
    var box = document.createDocumentFragment();
    box.appendChild(pre);
    var more = el("button", "navbtn showall", "Show all " + s.length.toLocaleString() + " characters");
    more.addEventListener("click", function () {
      pre.textContent = "";
      addText(pre, s, hl);
      more.remove();
    });
    var wrap = el("div");
    wrap.appendChild(box);
    wrap.appendChild(more);
    return wrap;
  }
  // a collapsible part whose body is built only when first opened
  function lazyDetails(cls, summaryNodes, open, build) {
    var d = el("details", cls);
    var sum = el("summary");
    for (var j = 0; j < summaryNodes.length; j++) {
      var n = summaryNodes[j];
      sum.appendChild(typeof n === "string" ? el("span", null, n) : n);
    }
    d.appendChild(sum);
    var built = false;
    function make() { if (!built) { built = true; d.appendChild(build()); } }
    if (open) { d.open = true; make(); }
    d.addEventListener("toggle", function () { if (d.open) make(); });
    return d;
  }

  // ---------------------------------------------------------------- entries as cards
  function role(i) { var m = E[i].message; return m && typeof m.role === "string" ? m.role : ""; }
  function systemChanges(m) {
    var out = [];
    if (Array.isArray(m.toolsAdded) && m.toolsAdded.length)
      out.push("tools + " + m.toolsAdded.map(function (t) { return t && typeof t === "object" ? str(t.name) : "?"; }).join(", "));
    if (Array.isArray(m.toolsRemoved) && m.toolsRemoved.length)
      out.push("tools − " + m.toolsRemoved.map(function (t) { return t && typeof t === "object" ? str(t.name) : "?"; }).join(", "));
    return out.join(" · ");
  }
  function usageText(e) {
    var u = e.usage && typeof e.usage === "object" ? e.usage : {};
    var out = str(e.provider) + "/" + str(e.model);
    if (typeof u.totalTokens === "number") out += ", " + u.totalTokens.toLocaleString() + " tokens";
    if (u.cost && typeof u.cost.total === "number") out += ", $" + u.cost.total.toFixed(4);
    if (e.note) out += " (" + str(e.note) + ")";
    return out;
  }
  function blocksOf(content) {
    if (typeof content === "string") return [{ type: "text", text: content }];
    return Array.isArray(content) ? content : [];
  }
  function textOfBlocks(content) {
    var out = [], bs = blocksOf(content);
    for (var j = 0; j < bs.length; j++) {
      var b = bs[j];
      if (!b || typeof b !== "object") continue;
      if (b.type === "text") out.push(str(b.text));
      else if (b.type === "thinking") out.push(str(b.thinking));
      else if (b.type === "toolCall") out.push(str(b.name) + "(" + (b.arguments == null ? "" : JSON.stringify(b.arguments)) + ")");
      else if (b.type === "image") out.push("[image]");
    }
    return out.join(" ");
  }
  var IMG_MIME = /^image\/(png|jpeg|jpg|gif|webp|bmp|avif)$/;
  var B64 = /^[A-Za-z0-9+/=\s]*$/;
  function imageBlock(b) {
    var mime = String(b.mimeType || b.mediaType || (b.source && b.source.media_type) || "");
    var dataStr = b.data != null ? b.data : b.source && b.source.data;
    if (!IMG_MIME.test(mime) || typeof dataStr !== "string" || !B64.test(dataStr)) {
      return el("div", "note", "[image: " + (mime || "unknown type") + "]");
    }
    var img = document.createElement("img");
    img.className = "img";
    img.alt = "image (" + mime + ")";
    img.src = "data:" + mime + ";base64," + dataStr.replace(/\s+/g, "");
    return img;
  }
  function collapsibleText(title, s, hl, openLimit) {
    var n = lines(s);
    var open = (n <= (openLimit || 12) && s.length <= 1500) || (hl && s.toLowerCase().indexOf(hl) >= 0);
    return lazyDetails("block", [title, el("span", "note", n.toLocaleString() + (n === 1 ? " line" : " lines"))], open,
      function () { return preText(s, hl); });
  }
  function toolCall(b, hl) {
    var box = el("div", "call block");
    var head = el("div");
    head.appendChild(el("span", "name", str(b.name) || "tool"));
    box.appendChild(head);
    var args = b.arguments;
    if (args && typeof args === "object" && !Array.isArray(args)) {
      // one line per short argument; long or multi-line ones (a file's new content,
      // an edit's old and new text) folded, with their real line breaks
      if (typeof args.command === "string") {
        var cmd = el("div", "cmd");
        addText(cmd, "$ " + args.command, hl);
        box.appendChild(cmd);
      }
      for (var key in args) {
        var v = args[key];
        if (key === "command" && typeof v === "string") continue;
        if (typeof v === "string" && v.indexOf("\n") < 0 && v.length <= 200) {
          var line = el("div", "cmd");
          addText(line, key + ": " + v, hl);
          box.appendChild(line);
        } else if (typeof v === "string") {
          box.appendChild(collapsibleText(key, v, hl, 12));
        } else if (v === null || typeof v !== "object") {
          var line2 = el("div", "cmd");
          addText(line2, key + ": " + JSON.stringify(v), hl);
          box.appendChild(line2);
        } else {
          box.appendChild(collapsibleText(key, JSON.stringify(v, null, 2), hl, 8));
        }
      }
    } else if (args != null) {
      box.appendChild(collapsibleText("arguments", JSON.stringify(args, null, 2), hl, 12));
    }
    return box;
  }
  function contentBlocks(target, content, hl, opts) {
    var bs = blocksOf(content);
    for (var j = 0; j < bs.length; j++) {
      var b = bs[j];
      if (!b || typeof b !== "object") continue;
      if (b.type === "text") {
        if (opts && opts.pre) {
          var s = str(b.text);
          target.appendChild(opts.collapse ? collapsibleText("output", s, hl) : preText(s, hl));
        } else target.appendChild(renderText(str(b.text), hl));
      } else if (b.type === "thinking") {
        var th = str(b.thinking);
        var words = th.split(/\s+/).filter(Boolean).length;
        var open = !!(hl && th.toLowerCase().indexOf(hl) >= 0);
        target.appendChild(lazyDetails("thinking block", ["Thinking", el("span", "note", words.toLocaleString() + " words")], open,
          (function (t) { return function () { var d = el("div", "text"); addText(d, t, hl); return d; }; })(th)));
      } else if (b.type === "toolCall") {
        target.appendChild(toolCall(b, hl));
      } else if (b.type === "image") {
        target.appendChild(imageBlock(b));
      } else {
        target.appendChild(collapsibleText(str(b.type) || "block", JSON.stringify(b, null, 2), hl, 4));
      }
    }
  }
  function shortTime(ts) {
    if (typeof ts !== "string") return "";
    var m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(:\d\d)?/.exec(ts);
    return m ? m[1] + " " + m[2] : ts;
  }
  function metaLine(i, who, extra) {
    var meta = el("div", "meta");
    meta.appendChild(el("span", "who", who));
    if (extra) meta.appendChild(el("span", null, extra));
    meta.appendChild(el("span", null, shortTime(E[i].timestamp)));
    meta.appendChild(el("span", "id", E[i].id));
    return meta;
  }
  function decorate(i, meta) {
    var lab = labels[E[i].id];
    if (lab) meta.appendChild(labelBadge(lab));
    if (i === sessionLeaf) meta.appendChild(el("span", "badge leaf", "current leaf"));
    if (siblingCount(i) > 1) meta.appendChild(switcher(i));
  }
  function labelBadge(lab) {
    var b = el("span", "badge label", lab);
    b.title = "label: " + lab;
    return b;
  }
  function switcher(i) {
    var sibs = siblingsOf(i);
    var at = sibs.indexOf(i);
    var box = el("span", "switch");
    box.title = "this entry has " + sibs.length + " branches";
    var prev = el("button", "sw-prev", "‹");
    prev.setAttribute("aria-label", "previous branch");
    prev.dataset.for = E[i].id;
    prev.disabled = at === 0;
    var next = el("button", "sw-next", "›");
    next.setAttribute("aria-label", "next branch");
    next.dataset.for = E[i].id;
    next.disabled = at === sibs.length - 1;
    prev.addEventListener("click", function () { var s = sibs[at - 1]; show(newest[s] >= 0 ? newest[s] : s, s, "branch"); });
    next.addEventListener("click", function () { var s = sibs[at + 1]; show(newest[s] >= 0 ? newest[s] : s, s, "branch"); });
    box.appendChild(prev);
    box.appendChild(el("span", "pos", "branch " + (at + 1) + " / " + sibs.length));
    box.appendChild(next);
    return box;
  }
  function chipCard(i, cls, parts) {
    var card = el("div", "card " + cls);
    var line = el("div", "chipline");
    var chip = el("span", "chip");
    for (var j = 0; j < parts.length; j++) {
      var pt = parts[j];
      if (j % 2) chip.appendChild(el("b", null, pt)); else chip.appendChild(document.createTextNode(pt));
    }
    chip.title = E[i].id + " · " + shortTime(E[i].timestamp);
    line.appendChild(chip);
    var lab = labels[E[i].id];
    if (lab) line.appendChild(labelBadge(lab));
    if (i === sessionLeaf) line.appendChild(el("span", "badge leaf", "current leaf"));
    if (siblingCount(i) > 1) line.appendChild(switcher(i));
    card.appendChild(line);
    return card;
  }
  function dividerCard(i, title, body, hl) {
    var card = el("div", "card summary");
    var d = el("div", "divider");
    var t = el("div", "dtitle", title);
    d.appendChild(t);
    var meta = el("div", "meta");
    meta.appendChild(el("span", "id", E[i].id));
    meta.appendChild(el("span", null, shortTime(E[i].timestamp)));
    decorate(i, meta);
    d.appendChild(meta);
    d.appendChild(collapsibleText("summary", body, hl, 8));
    card.appendChild(d);
    return card;
  }

  function card(i, hl) {
    var e = E[i];
    var t = e.type;
    var c;
    if (t === "message") {
      var m = e.message || {};
      var r = role(i);
      if (r === "user" || r === "assistant" || r === "custom") {
        c = el("div", "card " + (r === "assistant" ? "assistant" : "user"));
        var who = r === "user" ? "User" : r === "assistant" ? "Assistant" : "Custom · " + str(m.customType);
        var extra = r === "assistant" && m.model ? str(m.model) : "";
        var meta = metaLine(i, who, extra);
        decorate(i, meta);
        c.appendChild(meta);
        var bub = el("div", "bubble");
        contentBlocks(bub, m.content, hl);
        if (r === "assistant" && m.stopReason && m.stopReason !== "stop" && m.stopReason !== "toolUse" && m.stopReason !== "end_turn") {
          bub.appendChild(el("div", "err-text", "stopped: " + str(m.stopReason) + (m.errorMessage ? " — " + str(m.errorMessage) : "")));
        } else if (r === "assistant" && m.errorMessage) {
          bub.appendChild(el("div", "err-text", str(m.errorMessage)));
        }
        if (!bub.childNodes.length) bub.appendChild(el("div", "note", "(empty)"));
        c.appendChild(bub);
      } else if (r === "toolResult") {
        var bad = m.isError === true;
        c = el("div", "card tool" + (bad ? " err" : ""));
        var meta2 = metaLine(i, "Result", str(m.toolName));
        meta2.appendChild(el("span", "status " + (bad ? "err" : "ok"), bad ? "error" : "ok"));
        decorate(i, meta2);
        c.appendChild(meta2);
        var bub2 = el("div", "bubble");
        contentBlocks(bub2, m.content, hl, { pre: true, collapse: true });
        if (!bub2.childNodes.length) bub2.appendChild(el("div", "note", "(no output)"));
        c.appendChild(bub2);
      } else if (r === "system") {
        c = el("div", "card system");
        var metaS = metaLine(i, "System prompt", systemChanges(m));
        decorate(i, metaS);
        c.appendChild(metaS);
        var bubS = el("div", "bubble");
        var promptText = textOfBlocks(m.content);
        if (promptText) bubS.appendChild(collapsibleText("prompt", promptText, hl, 6));
        var secs = m.sections && typeof m.sections === "object" ? m.sections : null;
        if (secs) {
          for (var sk in secs) {
            if (!Object.prototype.hasOwnProperty.call(secs, sk)) continue;
            bubS.appendChild(secs[sk] == null ? el("div", "note", "section " + sk + " removed")
                                              : collapsibleText("section " + sk, str(secs[sk]), hl, 4));
          }
        }
        if (!bubS.childNodes.length) bubS.appendChild(el("div", "note", "(no change to the prompt text)"));
        c.appendChild(bubS);
      } else if (r === "bashExecution") {
        var code = m.exitCode;
        var fail = code != null && code !== 0;
        c = el("div", "card tool" + (fail ? " err" : ""));
        var meta3 = metaLine(i, "Shell", m.excludeFromContext ? "not sent to the model" : "");
        meta3.appendChild(el("span", "status " + (fail ? "err" : "ok"), m.cancelled ? "cancelled" : "exit " + (code == null ? "?" : code)));
        decorate(i, meta3);
        c.appendChild(meta3);
        var bub3 = el("div", "bubble");
        var cmd = el("div", "call block");
        var cl = el("div", "cmd");
        addText(cl, "$ " + str(m.command), hl);
        cmd.appendChild(cl);
        bub3.appendChild(cmd);
        bub3.appendChild(collapsibleText("output", str(m.output), hl));
        c.appendChild(bub3);
      } else {
        c = el("div", "card user");
        var meta4 = metaLine(i, "Message · " + (r || "?"));
        decorate(i, meta4);
        c.appendChild(meta4);
        var bub4 = el("div", "bubble");
        bub4.appendChild(collapsibleText("message", JSON.stringify(m, null, 2), hl, 8));
        c.appendChild(bub4);
      }
    } else if (t === "compaction") {
      c = dividerCard(i, "Compacted · " + Number(e.tokensBefore || 0).toLocaleString() + " tokens summarised", str(e.summary), hl);
    } else if (t === "branch_summary") {
      c = dividerCard(i, "Branch summary · came back from another branch", str(e.summary), hl);
    } else if (t === "custom_message") {
      c = el("div", "card user");
      var meta5 = metaLine(i, "Extension · " + str(e.customType), e.display === false ? "hidden in Pi" : "");
      decorate(i, meta5);
      c.appendChild(meta5);
      var bub5 = el("div", "bubble");
      contentBlocks(bub5, e.content, hl);
      c.appendChild(bub5);
    } else if (t === "model_change") {
      c = chipCard(i, "state", ["Model → ", str(e.provider) + " / " + str(e.modelId)]);
    } else if (t === "thinking_level_change") {
      c = chipCard(i, "state", ["Thinking level → ", str(e.thinkingLevel)]);
    } else if (t === "active_tools_change") {
      c = chipCard(i, "state", ["Active tools → ", (e.activeToolNames || []).join(", ") || "none"]);
    } else if (t === "label") {
      var target = index.has(e.targetId) ? e.targetId : e.targetId + " (not in this tree)";
      c = e.label ? chipCard(i, "state", ["Label ", str(e.label), " on ", target])
                  : chipCard(i, "state", ["Label cleared on ", target]);
    } else if (t === "session_info") {
      c = e.name ? chipCard(i, "state", ["Session named ", str(e.name)]) : chipCard(i, "state", ["Session name cleared", ""]);
    } else if (t === "custom") {
      c = chipCard(i, "state", ["Extension state · ", str(e.customType)]);
    } else if (t === "usage") {
      c = chipCard(i, "state", ["Usage" + (e.kind ? " · " + str(e.kind) : "") + " · ", usageText(e)]);
    } else if (t === "context_edit") {
      var tgt = index.has(e.targetId) ? e.targetId : e.targetId + " (not in this tree)";
      if (e.replacement == null) {
        c = chipCard(i, "state", ["Context edit: ", tgt, " left out of the model's context", ""]);
      } else {
        c = el("div", "card edit");
        var metaE = metaLine(i, "Context edit", "replaces what " + tgt + " gives the model");
        decorate(i, metaE);
        c.appendChild(metaE);
        var bubE = el("div", "bubble");
        contentBlocks(bubE, e.replacement.content, hl);
        if (!bubE.childNodes.length) bubE.appendChild(el("div", "note", "(empty)"));
        c.appendChild(bubE);
      }
    } else {
      c = chipCard(i, "state", ["Entry of type ", str(t)]);
    }
    c.dataset.id = e.id;
    c.dataset.kind = t === "message" ? role(i) : t;
    return c;
  }

  // ---------------------------------------------------------------- previews and search text
  function preview(i) {
    var e = E[i], t = e.type;
    if (t === "message") {
      var m = e.message || {}, r = role(i);
      if (r === "bashExecution") return "$ " + str(m.command);
      if (r === "toolResult") return str(m.toolName) + " → " + textOfBlocks(m.content);
      return textOfBlocks(m.content) || (m.errorMessage ? str(m.errorMessage) : "");
    }
    if (t === "compaction" || t === "branch_summary") return str(e.summary);
    if (t === "model_change") return str(e.provider) + "/" + str(e.modelId);
    if (t === "thinking_level_change") return str(e.thinkingLevel);
    if (t === "label") return (e.label ? str(e.label) : "(cleared)") + " → " + str(e.targetId);
    if (t === "session_info") return str(e.name);
    if (t === "custom_message") return textOfBlocks(e.content);
    if (t === "custom") return str(e.customType);
    if (t === "active_tools_change") return (e.activeToolNames || []).join(", ");
    if (t === "usage") return usageText(e);
    if (t === "context_edit")
      return "edit " + str(e.targetId) + ": " + (e.replacement == null ? "(removed)" : textOfBlocks(e.replacement.content));
    return t;
  }
  function kindOf(i) {
    var t = E[i].type;
    if (t !== "message") return { compaction: "compaction", branch_summary: "summary", model_change: "model",
      thinking_level_change: "thinking", label: "label", session_info: "name", custom_message: "extension",
      custom: "state", active_tools_change: "tools", usage: "usage", context_edit: "edit" }[t] || t;
    var r = role(i);
    return { user: "user", assistant: "assistant", toolResult: "result", bashExecution: "shell" }[r] || r;
  }
  function dotClass(i) {
    var t = E[i].type;
    if (t === "message") {
      var r = role(i);
      return r + (r === "toolResult" && E[i].message.isError === true ? " err" : "");
    }
    if (t === "compaction" || t === "branch_summary") return "summary";
    if (t === "custom_message") return "user";
    return "state";
  }
  var searchText = null;
  function buildSearchText() {
    searchText = new Array(N);
    for (var j = 0; j < N; j++) {
      var e = E[j], parts = [];
      if (e.type === "message") {
        var m = e.message || {};
        parts.push(textOfBlocks(m.content));
        if (m.toolName) parts.push(str(m.toolName));
        if (m.command) parts.push(str(m.command));
        if (m.output) parts.push(str(m.output));
        if (m.errorMessage) parts.push(str(m.errorMessage));
      } else {
        parts.push(preview(j));
        if (e.type === "custom_message" && e.customType) parts.push(str(e.customType));
      }
      var lab = labels[e.id];
      if (lab) parts.push(lab);
      searchText[j] = parts.join("\n").toLowerCase();
    }
  }

  // ---------------------------------------------------------------- the path view
  var mainEl = document.getElementById("main");
  var listEl = document.getElementById("cards");
  var topS = document.getElementById("top-sentinel");
  var botS = document.getElementById("bottom-sentinel");
  var topNote = document.getElementById("top-note");
  var botNote = document.getElementById("bottom-note");
  var pathInfo = document.getElementById("path-info");

  var path = new Int32Array(0);
  var pathGen = new Int32Array(N);
  var pathPos = new Int32Array(N);
  var gen = 0;
  var shownLeaf = -1;
  var focusEntry = -1;
  var winStart = 0, winEnd = 0;
  var highlight = "";
  var busy = false;

  function computePath(leaf) {
    var out = [];
    for (var x = leaf; x >= 0; x = parent[x]) out.push(x);
    out.reverse();
    gen++;
    for (var j = 0; j < out.length; j++) { pathGen[out[j]] = gen; pathPos[out[j]] = j; }
    return Int32Array.from(out);
  }
  function onPath(i) { return pathGen[i] === gen; }

  function renderWindow(from, to) {
    listEl.textContent = "";
    var frag = document.createDocumentFragment();
    for (var j = from; j < to; j++) frag.appendChild(card(path[j], highlight && path[j] === focusEntry ? highlight : ""));
    listEl.appendChild(frag);
    winStart = from;
    winEnd = to;
    notes();
  }
  function notes() {
    topNote.textContent = winStart > 0 ? winStart.toLocaleString() + " earlier entries on this path (scroll up)" : "";
    botNote.textContent = winEnd < path.length ? (path.length - winEnd).toLocaleString() + " more entries on this path (scroll down)" : "";
  }
  function extendDown() {
    if (winEnd >= path.length) return;
    var to = Math.min(path.length, winEnd + STEP);
    var frag = document.createDocumentFragment();
    for (var j = winEnd; j < to; j++) frag.appendChild(card(path[j], ""));
    listEl.appendChild(frag);
    winEnd = to;
    while (winEnd - winStart > MAX_CARDS) {
      var first = listEl.firstChild;
      var h = first.getBoundingClientRect().height + 12;
      first.remove();
      winStart++;
      mainEl.scrollTop -= h;
    }
    notes();
  }
  function extendUp() {
    if (winStart <= 0) return;
    var from = Math.max(0, winStart - STEP);
    var before = mainEl.scrollHeight;
    var frag = document.createDocumentFragment();
    for (var j = from; j < winStart; j++) frag.appendChild(card(path[j], ""));
    listEl.insertBefore(frag, listEl.firstChild);
    winStart = from;
    while (winEnd - winStart > MAX_CARDS) { listEl.lastChild.remove(); winEnd--; }
    notes();
    mainEl.scrollTop += mainEl.scrollHeight - before;
  }
  // Grow the window while an end of it is near the visible part.  Called when a
  // sentinel comes into view, and after every jump: a sentinel that is already in view
  // then would never report again.
  var MARGIN = 600;
  function settle() {
    for (var n = 0; n < 8; n++) {
      var view = mainEl.getBoundingClientRect();
      if (winEnd < path.length && botS.getBoundingClientRect().top < view.bottom + MARGIN) extendDown();
      else if (winStart > 0 && topS.getBoundingClientRect().bottom > view.top - MARGIN) extendUp();
      else return;
    }
  }
  var io = new IntersectionObserver(function () {
    if (!busy) settle();
  }, { root: mainEl, rootMargin: MARGIN + "px 0px" });
  io.observe(topS);
  io.observe(botS);

  // Show the path from the root to `leaf`, scrolled to `target` (an entry on it).
  function show(leaf, target, why, hl) {
    busy = true;
    shownLeaf = leaf;
    path = computePath(leaf);
    focusEntry = target;
    highlight = hl || "";
    var at = target >= 0 && onPath(target) ? pathPos[target] : 0;
    var from = target >= 0 ? Math.max(0, at - 20) : 0;
    var to = Math.min(path.length, from + WINDOW);
    if (why === "end") { to = path.length; from = Math.max(0, to - WINDOW); }
    renderWindow(from, to);
    var msgs = 0;
    for (var j = 0; j < path.length; j++) if (E[path[j]].type === "message") msgs++;
    pathInfo.textContent = "";
    pathInfo.appendChild(el("b", null, path.length.toLocaleString()));
    pathInfo.appendChild(document.createTextNode(" entries on this path · "));
    var mc = el("b", null, msgs.toLocaleString());
    mc.id = "path-messages";
    pathInfo.appendChild(mc);
    pathInfo.appendChild(document.createTextNode(" messages · ending at "));
    pathInfo.appendChild(el("span", "mono", leaf >= 0 ? E[leaf].id : "—"));
    pathInfo.appendChild(document.createTextNode(leaf === sessionLeaf ? " (the current leaf)" : " (another branch)"));
    document.body.dataset.leaf = leaf >= 0 ? E[leaf].id : "";
    var focused = null;
    if (target >= 0) {
      focused = listEl.querySelector('[data-id="' + cssEscape(E[target].id) + '"]');
      if (focused) focused.classList.add("focus");
    }
    if (why === "end") mainEl.scrollTop = mainEl.scrollHeight;
    else if (focused && why !== "start") focused.scrollIntoView({ block: why === "branch" ? "start" : "center" });
    else mainEl.scrollTop = 0;
    if (why === "branch" && focused) mainEl.scrollTop -= 60;
    drawTree(target >= 0 ? target : leaf);
    // a link to this view: the page's address ends in #<entry id>
    var anchor = target >= 0 ? target : leaf;
    if (anchor >= 0 && history.replaceState) {
      try { history.replaceState(null, "", "#" + encodeURIComponent(E[anchor].id)); } catch (err) { /* file: in some browsers */ }
    }
    setTimeout(function () { busy = false; settle(); }, 50);
  }
  function cssEscape(s) { return window.CSS && CSS.escape ? CSS.escape(s) : s.replace(/["\\]/g, "\\$&"); }

  // ---------------------------------------------------------------- the tree panel
  var treeEl = document.getElementById("tree");
  var spacer = document.getElementById("tree-spacer");
  spacer.style.height = ROWS * ROW_H + "px";
  var hitSet = null;
  var treeFocus = -1;
  function drawTree(scrollTo) {
    if (scrollTo != null && scrollTo >= 0) {
      treeFocus = scrollTo;
      var y = row[scrollTo] * ROW_H;
      if (y < treeEl.scrollTop || y > treeEl.scrollTop + treeEl.clientHeight - ROW_H) {
        treeEl.scrollTop = Math.max(0, y - treeEl.clientHeight / 2);
      }
    }
    var first = Math.max(0, Math.floor(treeEl.scrollTop / ROW_H) - 10);
    var last = Math.min(ROWS, Math.ceil((treeEl.scrollTop + treeEl.clientHeight) / ROW_H) + 10);
    spacer.textContent = "";
    var frag = document.createDocumentFragment();
    for (var r = first; r < last; r++) frag.appendChild(treeRow(order[r], r));
    spacer.appendChild(frag);
  }
  function treeRow(i, r) {
    var d = el("div", "row");
    d.style.top = r * ROW_H + "px";
    var lv = Math.min(level[i], 40);
    d.style.paddingLeft = 8 + lv * 14 + "px";
    if (lv) d.style.setProperty("--rails", lv * 14 + "px");
    d.dataset.id = E[i].id;
    if (onPath(i)) d.classList.add("on-path");
    if (i === treeFocus) d.classList.add("focus");
    if (hitSet && hitSet.has(i)) d.classList.add("hit");
    if (siblingCount(i) > 1) {
      var sibs = siblingsOf(i);
      d.appendChild(el("span", "glyph", sibs[sibs.length - 1] === i ? "└" : "├"));
    }
    d.appendChild(el("span", "dot " + dotClass(i)));
    d.appendChild(el("span", "kind", kindOf(i)));
    d.appendChild(el("span", "txt", preview(i).slice(0, 160).replace(/\s+/g, " ")));
    var lab = labels[E[i].id];
    if (lab) d.appendChild(labelBadge(lab));
    if (i === sessionLeaf) d.appendChild(el("span", "badge leaf", "leaf"));
    d.title = E[i].id;
    return d;
  }
  var treeQueued = false;
  treeEl.addEventListener("scroll", function () {
    if (treeQueued) return;
    treeQueued = true;
    requestAnimationFrame(function () { treeQueued = false; drawTree(null); });
  });
  treeEl.addEventListener("keydown", function (ev) {
    var k = ev.key;
    if (k !== "ArrowDown" && k !== "ArrowUp" && k !== "Enter" && k !== "Home" && k !== "End") return;
    ev.preventDefault();
    var r = treeFocus >= 0 ? row[treeFocus] : 0;
    if (k === "Enter") {
      if (treeFocus >= 0) show(onPath(treeFocus) ? shownLeaf : newest[treeFocus] >= 0 ? newest[treeFocus] : treeFocus, treeFocus, "tree");
      treeEl.focus();
      return;
    }
    r = k === "ArrowDown" ? Math.min(ROWS - 1, r + 1) : k === "ArrowUp" ? Math.max(0, r - 1) : k === "Home" ? 0 : ROWS - 1;
    if (ROWS) drawTree(order[r]);
  });
  spacer.addEventListener("click", function (ev) {
    var r = ev.target.closest(".row");
    if (!r) return;
    var i = index.get(r.dataset.id);
    if (i == null) return;
    var leaf = onPath(i) ? shownLeaf : newest[i] >= 0 ? newest[i] : i;
    show(leaf, i, "tree");
    if (matchMedia("(max-width: 820px)").matches) app.classList.remove("show-tree-mobile");
  });

  // ---------------------------------------------------------------- search
  var searchEl = document.getElementById("search");
  var countEl = document.getElementById("search-count");
  var resultsEl = document.getElementById("results");
  var prevBtn = document.getElementById("search-prev");
  var nextBtn = document.getElementById("search-next");
  var hits = [];
  var hitAt = -1;
  var query = "";
  var timer = 0;
  function runSearch() {
    var q = searchEl.value.trim().toLowerCase();
    if (q === query) return;
    query = q;
    hits = [];
    hitAt = -1;
    hitSet = null;
    resultsEl.textContent = "";
    if (!q) {
      countEl.textContent = "";
      resultsEl.classList.remove("open");
      prevBtn.disabled = nextBtn.disabled = true;
      drawTree(null);
      return;
    }
    if (!searchText) buildSearchText();
    for (var r = 0; r < ROWS; r++) if (searchText[order[r]].indexOf(q) >= 0) hits.push(order[r]);
    hitSet = new Set(hits);
    countEl.textContent = hits.length ? hits.length.toLocaleString() + (hits.length === 1 ? " hit" : " hits") : "no hits";
    prevBtn.disabled = nextBtn.disabled = hits.length === 0;
    var shown = Math.min(hits.length, 200);
    var frag = document.createDocumentFragment();
    for (var j = 0; j < shown; j++) frag.appendChild(hitButton(hits[j], j, q));
    if (hits.length > shown) frag.appendChild(el("div", "more", (hits.length - shown).toLocaleString() + " more: use Enter or the arrows to step through all"));
    resultsEl.appendChild(frag);
    resultsEl.classList.toggle("open", hits.length > 0);
    drawTree(null);
  }
  function hitButton(i, j, q) {
    var b = el("button", "hit");
    b.dataset.id = E[i].id;
    b.appendChild(el("span", "k", kindOf(i) + " · " + E[i].id + (onPath(i) ? "" : " · other branch")));
    var s = searchText[i];
    var at = s.indexOf(q);
    var raw = preview(i);
    var full = raw.toLowerCase() === s.slice(0, raw.length) ? raw : s;
    var from = Math.max(0, at - 40);
    var snip = el("span", "s");
    addText(snip, (from ? "…" : "") + full.slice(from, at + q.length + 80).replace(/\s+/g, " "), q);
    b.appendChild(snip);
    b.addEventListener("click", function () { goHit(j); });
    return b;
  }
  function goHit(j) {
    if (!hits.length) return;
    hitAt = (j + hits.length) % hits.length;
    var i = hits[hitAt];
    var leaf = onPath(i) ? shownLeaf : newest[i] >= 0 ? newest[i] : i;
    show(leaf, i, "search", query);
    countEl.textContent = (hitAt + 1).toLocaleString() + " / " + hits.length.toLocaleString();
    var bs = resultsEl.querySelectorAll(".hit");
    for (var b = 0; b < bs.length; b++) bs[b].classList.toggle("active", b === hitAt);
    resultsEl.classList.remove("open");
  }
  searchEl.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(runSearch, 180); });
  searchEl.addEventListener("focus", function () { if (hits.length) resultsEl.classList.add("open"); });
  searchEl.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") { clearTimeout(timer); runSearch(); goHit(ev.shiftKey ? hitAt - 1 : hitAt + 1); ev.preventDefault(); }
    // (a search field clears itself on Escape: here Escape only closes the list)
    else if (ev.key === "Escape") { resultsEl.classList.remove("open"); searchEl.blur(); ev.preventDefault(); }
  });
  prevBtn.addEventListener("click", function () { goHit(hitAt - 1); });
  nextBtn.addEventListener("click", function () { goHit(hitAt + 1); });
  document.addEventListener("click", function (ev) {
    if (!ev.target.closest("#search-box")) resultsEl.classList.remove("open");
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "/" && document.activeElement !== searchEl) { searchEl.focus(); ev.preventDefault(); }
  });

  // ---------------------------------------------------------------- header and controls
  var app = document.getElementById("app");
  document.getElementById("toggle-tree").addEventListener("click", function () {
    if (matchMedia("(max-width: 820px)").matches) app.classList.toggle("show-tree-mobile");
    else app.classList.toggle("no-tree");
    drawTree(null);
  });
  document.getElementById("go-start").addEventListener("click", function () { show(shownLeaf, -1, "start"); });
  document.getElementById("go-end").addEventListener("click", function () { show(shownLeaf, shownLeaf, "end"); });
  document.getElementById("go-leaf").addEventListener("click", function () {
    var l = sessionLeaf >= 0 ? sessionLeaf : newestOverall();
    show(l, l, "end");
  });
  function newestOverall() { var best = -1; for (var j = 0; j < roots.length; j++) if (newest[roots[j]] > best) best = newest[roots[j]]; return best; }

  var h = data.header || {};
  var name = data.name || "";
  // no name: the first thing the user asked, as Pi's session list shows it
  var title = name;
  for (i = 0; i < N && !title; i++) {
    if (role(i) === "user") title = textOfBlocks(E[i].message.content).replace(/\s+/g, " ").trim().slice(0, 90);
  }
  title = title || (h.id ? "Session " + h.id : "Untitled session");
  document.getElementById("title").textContent = title;
  document.title = title + " · ptree";
  var h1 = document.getElementById("h1");
  addText(h1, title);
  var facts = document.getElementById("facts");
  function fact(label, value, mono) {
    if (value == null || value === "") return;
    var s = el("span");
    s.appendChild(document.createTextNode(label + " "));
    s.appendChild(el("b", mono ? "mono" : null, value));
    facts.appendChild(s);
  }
  var leaves = 0;
  for (i = 0; i < N; i++) if (nkids[i] === 0) leaves++;
  fact("started", shortTime(h.timestamp));
  fact("in", h.cwd, true);
  fact("entries", N.toLocaleString());
  fact("branches", leaves.toLocaleString());
  fact("session", h.id, true);
  if (h.parentSession) fact("forked from", h.parentSession, true);
  document.getElementById("side-count").textContent = N.toLocaleString() + " entries · " + leaves.toLocaleString() + (leaves === 1 ? " leaf" : " leaves");

  var start = data.show != null && index.has(data.show) ? index.get(data.show) : sessionLeaf >= 0 ? sessionLeaf : newestOverall();
  var linked = -1;
  try { linked = location.hash.length > 1 ? index.get(decodeURIComponent(location.hash.slice(1))) : -1; } catch (err) { linked = -1; }
  if (linked != null && linked >= 0) {
    // the linked entry on the path it is on now, or else on its newest branch
    var lf = newest[linked] >= 0 ? newest[linked] : linked;
    for (var up = start; up >= 0; up = parent[up]) if (up === linked) { lf = start; break; }
    show(lf, linked, "tree");
  }
  else if (start >= 0) show(start, -1, "start");
  else pathInfo.textContent = "This session has no entries.";
  drawTree(start);
  mark("ptree-ready");
  document.body.dataset.ready = "1";
})();
