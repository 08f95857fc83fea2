/* Optional C speedup for gen.coroutine's wrapper (gen.py's docstring tells where it fits).
 *
 * A call of a coroutine function mostly ends at once: the generator raises Return, or it
 * yields a Future. Here the call, the first next() and the catch of Return run without a
 * Python frame of their own; everything past the first yield (the Runner) stays in
 * Python, in gen.py. Behaviour is that of gen.py's pure-Python wrapper, which is used
 * when this module is not built or TINYTORNADO_EXTENSION=0.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>  /* offsetof */

#ifndef Py_XSETREF  /* 2.7 */
#define Py_XSETREF(target, value) \
    do { PyObject *_old = (PyObject *)(target); (target) = (value); Py_XDECREF(_old); } while (0)
#endif

/* What gen.py hands over once, through configure(). */
static PyObject *future_class;    /* concurrent.Future */
static PyObject *return_class;    /* gen.Return */
static PyObject *finished_state;  /* concurrent._FINISHED */
static PyObject *start_runner;    /* gen._start_runner(gen, first_yielded) -> Future */

static PyObject *str_result, *str_state, *str_exc_info, *str_set_exc_info, *str_value;

typedef struct {
    PyObject_HEAD
    PyObject *func;
    PyObject *dict;
    PyObject *weakreflist;
#if PY_VERSION_HEX >= 0x03090000
    vectorcallfunc vectorcall;
#endif
} CoroutineFunction;

/* A Future already resolved with `value` (a new reference), as gen.py's wrapper makes
 * it: no callback can have been added yet, so no set_result bookkeeping. */
static PyObject *
resolved_future(PyObject *value)
{
    PyObject *future = PyObject_CallObject(future_class, NULL);
    if (future == NULL)
        return NULL;
    if (PyObject_SetAttr(future, str_result, value) < 0 ||
        PyObject_SetAttr(future, str_state, finished_state) < 0 ||
        PyObject_SetAttr(future, str_exc_info, Py_None) < 0) {
        Py_DECREF(future);
        return NULL;
    }
    return future;
}

/* The error set now, as the coroutine's outcome: Return and StopIteration give their
 * value, any other Exception a failed Future; a BaseException that is not an Exception
 * (KeyboardInterrupt, SystemExit) propagates, as from the Python wrapper. */
static PyObject *
future_from_error(void)
{
    PyObject *type, *value, *tb, *result, *future;

    if (PyErr_ExceptionMatches(return_class)) {
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        /* args, as the Python wrapper reads it: Return.value is a property over it. */
        result = ((PyBaseExceptionObject *)value)->args;
        result = (result != NULL && PyTuple_GET_SIZE(result) > 0)
            ? PyTuple_GET_ITEM(result, 0) : Py_None;
        future = resolved_future(result);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return future;
    }
    if (PyErr_ExceptionMatches(PyExc_StopIteration)) {
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        /* _compat.value_from_stop_iteration: .value (3.3+), else the only argument. */
        result = PyObject_GetAttr(value, str_value);
        if (result == NULL) {
            PyErr_Clear();
        }
        if (result == NULL || result == Py_None) {
            PyObject *args = ((PyBaseExceptionObject *)value)->args;
            Py_XDECREF(result);
            result = (args != NULL && PyTuple_GET_SIZE(args) > 0)
                ? PyTuple_GET_ITEM(args, 0) : Py_None;
            Py_INCREF(result);
        }
        future = resolved_future(result);
        Py_DECREF(result);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return future;
    }
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyObject *exc_info;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb == NULL) {
            Py_INCREF(Py_None);
            tb = Py_None;
        }
#if PY_MAJOR_VERSION >= 3
        else {
            PyException_SetTraceback(value, tb);  /* As sys.exc_info() gives it. */
        }
#endif
        exc_info = PyTuple_Pack(3, type, value, tb);
        Py_DECREF(type);
        Py_DECREF(value);
        Py_DECREF(tb);
        if (exc_info == NULL)
            return NULL;
        future = PyObject_CallObject(future_class, NULL);
        if (future != NULL) {
            result = PyObject_CallMethodObjArgs(future, str_set_exc_info, exc_info, NULL);
            if (result == NULL) {
                Py_CLEAR(future);
            }
            Py_XDECREF(result);
        }
        Py_DECREF(exc_info);
        return future;
    }
    return NULL;
}

/* What the call of a decorated function gives: the function's result turned into the
 * coroutine's Future (`result` is a new reference, or NULL with an error set). */
static PyObject *
coroutine_future(PyObject *result)
{
    PyObject *yielded, *future;

    if (result == NULL)
        return future_from_error();
    if (!PyGen_CheckExact(result)) {
        future = resolved_future(result);
        Py_DECREF(result);
        return future;
    }
    yielded = Py_TYPE(result)->tp_iternext(result);
    if (yielded != NULL) {
#if PY_VERSION_HEX >= 0x03090000
        PyObject *start_args[2] = {result, yielded};
        future = PyObject_Vectorcall(start_runner, start_args, 2, NULL);
#else
        future = PyObject_CallFunctionObjArgs(start_runner, result, yielded, NULL);
#endif
        Py_DECREF(yielded);
        Py_DECREF(result);
        if (future == NULL)
            return future_from_error();
        return future;
    }
    Py_DECREF(result);
    if (PyErr_Occurred())
        return future_from_error();
    return resolved_future(Py_None);  /* It ended at once without a value. */
}

static PyObject *
cf_call(CoroutineFunction *self, PyObject *args, PyObject *kwargs)
{
    return coroutine_future(PyObject_Call(self->func, args, kwargs));
}

#if PY_VERSION_HEX >= 0x03090000
static PyObject *
cf_vectorcall(CoroutineFunction *self, PyObject *const *args, size_t nargsf,
              PyObject *kwnames)
{
    return coroutine_future(PyObject_Vectorcall(self->func, args, nargsf, kwnames));
}
#endif

static PyObject *
cf_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *func;
    CoroutineFunction *self;

    if (future_class == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "tinytornado._speedups is not configured");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:CoroutineFunction", &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "CoroutineFunction() needs a callable");
        return NULL;
    }
    self = (CoroutineFunction *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(func);
    self->func = func;
#if PY_VERSION_HEX >= 0x03090000
    self->vectorcall = (vectorcallfunc)cf_vectorcall;
#endif
    return (PyObject *)self;
}

static int
cf_traverse(CoroutineFunction *self, visitproc visit, void *arg)
{
    Py_VISIT(self->func);
    Py_VISIT(self->dict);
    return 0;
}

static int
cf_clear(CoroutineFunction *self)
{
    Py_CLEAR(self->func);
    Py_CLEAR(self->dict);
    return 0;
}

static void
cf_dealloc(CoroutineFunction *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    cf_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Bound like a function: to an instance it makes a method; from the class, itself. */
static PyObject *
cf_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
#if PY_MAJOR_VERSION >= 3
    return PyMethod_New(self, obj);
#else
    return PyMethod_New(self, obj, type);
#endif
}

static PyObject *
cf_repr(CoroutineFunction *self)
{
#if PY_MAJOR_VERSION >= 3
    return PyUnicode_FromFormat("<coroutine function %R>", self->func);
#else
    PyObject *func_repr = PyObject_Repr(self->func), *text;
    if (func_repr == NULL)
        return NULL;
    text = PyString_FromFormat("<coroutine function %s>", PyString_AS_STRING(func_repr));
    Py_DECREF(func_repr);
    return text;
#endif
}

static PyObject *
cf_get_dict(CoroutineFunction *self, void *closure)
{
    if (self->dict == NULL && (self->dict = PyDict_New()) == NULL)
        return NULL;
    Py_INCREF(self->dict);
    return self->dict;
}

static int
cf_set_dict(CoroutineFunction *self, PyObject *value, void *closure)
{
    if (value == NULL || !PyDict_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "__dict__ must be set to a dict");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(self->dict, value);
    return 0;
}

/* Pickled by name, as a module-level function is (functools.wraps sets __qualname__ and
 * __module__, so pickle finds the decorated function again). */
static PyObject *
cf_reduce(CoroutineFunction *self, PyObject *unused)
{
#if PY_MAJOR_VERSION >= 3
    return PyObject_GetAttrString((PyObject *)self, "__qualname__");
#else
    return PyObject_GetAttrString((PyObject *)self, "__name__");
#endif
}

static PyGetSetDef cf_getset[] = {
    {"__dict__", (getter)cf_get_dict, (setter)cf_set_dict, NULL, NULL},
    {NULL}
};

static PyMethodDef cf_methods[] = {
    {"__reduce__", (PyCFunction)cf_reduce, METH_NOARGS, NULL},
    {NULL}
};

static PyTypeObject CoroutineFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    "tinytornado._speedups.CoroutineFunction",
    sizeof(CoroutineFunction),
};

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *future, *ret, *finished, *start;
    if (!PyArg_ParseTuple(args, "OOOO:configure", &future, &ret, &finished, &start))
        return NULL;
    Py_INCREF(future);
    Py_INCREF(ret);
    Py_INCREF(finished);
    Py_INCREF(start);
    Py_XSETREF(future_class, future);
    Py_XSETREF(return_class, ret);
    Py_XSETREF(finished_state, finished);
    Py_XSETREF(start_runner, start);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Future, Return, FINISHED, start_runner): what the wrapper builds with."},
    {NULL}
};

static int
intern_names(void)
{
#if PY_MAJOR_VERSION >= 3
#define INTERN PyUnicode_InternFromString
#else
#define INTERN PyString_InternFromString
#endif
    return (str_result = INTERN("_result")) != NULL &&
           (str_state = INTERN("_state")) != NULL &&
           (str_exc_info = INTERN("_exc_info")) != NULL &&
           (str_set_exc_info = INTERN("set_exc_info")) != NULL &&
           (str_value = INTERN("value")) != NULL;
#undef INTERN
}

static int
ready_type(void)
{
    CoroutineFunctionType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
#if PY_VERSION_HEX >= 0x03090000
        | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR
#endif
        ;
    CoroutineFunctionType.tp_doc = "A gen.coroutine-decorated function (C wrapper).";
    CoroutineFunctionType.tp_new = cf_new;
    CoroutineFunctionType.tp_dealloc = (destructor)cf_dealloc;
    CoroutineFunctionType.tp_traverse = (traverseproc)cf_traverse;
    CoroutineFunctionType.tp_clear = (inquiry)cf_clear;
    CoroutineFunctionType.tp_call = (ternaryfunc)cf_call;
    CoroutineFunctionType.tp_descr_get = cf_descr_get;
    CoroutineFunctionType.tp_repr = (reprfunc)cf_repr;
    CoroutineFunctionType.tp_getset = cf_getset;
    CoroutineFunctionType.tp_methods = cf_methods;
    CoroutineFunctionType.tp_dictoffset = offsetof(CoroutineFunction, dict);
    CoroutineFunctionType.tp_weaklistoffset = offsetof(CoroutineFunction, weakreflist);
#if PY_VERSION_HEX >= 0x03090000
    CoroutineFunctionType.tp_vectorcall_offset = offsetof(CoroutineFunction, vectorcall);
#endif
    return PyType_Ready(&CoroutineFunctionType);
}

#if PY_MAJOR_VERSION >= 3
static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT, "tinytornado._speedups", NULL, -1, module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *module;
    if (!intern_names() || ready_type() < 0)
        return NULL;
    module = PyModule_Create(&speedups_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&CoroutineFunctionType);
    if (PyModule_AddObject(module, "CoroutineFunction",
                           (PyObject *)&CoroutineFunctionType) < 0) {
        Py_DECREF(&CoroutineFunctionType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
#else
PyMODINIT_FUNC
init_speedups(void)
{
    PyObject *module;
    if (!intern_names() || ready_type() < 0)
        return;
    module = Py_InitModule("tinytornado._speedups", module_methods);
    if (module == NULL)
        return;
    Py_INCREF(&CoroutineFunctionType);
    PyModule_AddObject(module, "CoroutineFunction", (PyObject *)&CoroutineFunctionType);
}
#endif
