// localmessage console: confirmations, select-all, optional auto-refresh. No dependencies.
(function () {
  'use strict';
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (e) {
      if (!window.confirm(form.getAttribute('data-confirm'))) {
        e.preventDefault();
      }
    });
  });
  var all = document.getElementById('select-all');
  if (all) {
    all.addEventListener('change', function () {
      document.querySelectorAll('input[type=checkbox][name=id]').forEach(function (box) {
        box.checked = all.checked;
      });
    });
  }
  var refresh = document.getElementById('auto-refresh');
  if (refresh) {
    var key = 'localmessage.autoRefresh';
    refresh.checked = window.localStorage.getItem(key) === 'on';
    var timer = null;
    var arm = function () {
      if (timer) { window.clearTimeout(timer); timer = null; }
      if (refresh.checked) { timer = window.setTimeout(function () { window.location.reload(); }, 5000); }
    };
    refresh.addEventListener('change', function () {
      window.localStorage.setItem(key, refresh.checked ? 'on' : 'off');
      arm();
    });
    arm();
  }
})();
